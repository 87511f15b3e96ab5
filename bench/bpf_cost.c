// SPDX-License-Identifier: MIT
/*
 * bpf_cost: CPU time of one pass over a set of processes, per process, for each way jobscope can read them:
 *
 *   bpf-task     the BPF task reader walking every process on the machine with a PID filter (the set given)
 *   bpf-cgroup   the BPF task reader walking one cgroup subtree (--cgroup DIR; the set must be in it)
 *   procfs       pread() of kept-open /proc/PID/stat, statm and io (each read whole, one pread each)
 *   stat         pread() of kept-open /proc/PID/stat alone
 *   schedstat    pread() of kept-open /proc/PID/schedstat alone
 *
 * The set is a process tree (--tree ROOT: ROOT and its descendants, found once from the children files) or a
 * list of PIDs. Each method runs W warm-up passes then S measured passes back to back; the CPU time of the
 * process (CLOCK_PROCESS_CPUTIME_ID: the kernel work of the BPF program and of procfs counts, it runs in this
 * process's system calls) and the wall time of each pass are taken, and the median, 10th and 90th
 * percentiles are printed per pass and per process. Output: one JSON object per method on stdout. With -i MS
 * the passes are MS milliseconds apart, as in a sampling run at that interval: the kernel structures a pass
 * reads are then cold again at each pass (back to back they stay in the caches, and a pass costs several
 * times less than inside jobscope).
 *
 * usage: bpf_cost [-s S] [-w W] [-i MS] [--methods LIST] [--cgroup DIR] (--tree ROOT | PID...)
 *        LIST: comma-separated method names (default bpf-task,procfs,stat,schedstat, plus bpf-cgroup with
 *        --cgroup)
 */
#include "sources/bpf/tasks_bpf.h"
#include "sys/fsroot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int32_t *v;
    size_t n, cap;
} pids_t;

static int pids_add(pids_t *p, int32_t pid)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i] == pid)
            return 0;
    if (p->n == p->cap) {
        size_t c = p->cap ? p->cap * 2 : 64;
        int32_t *v = realloc(p->v, c * sizeof(*v));
        if (!v)
            return -ENOMEM;
        p->v = v;
        p->cap = c;
    }
    p->v[p->n++] = pid;
    return 0;
}

static char rbuf[1 << 20]; /* children files at discovery */
static char pbuf[1 << 16]; /* the procfs passes: what floor.c reads with */

/* read_file: all of `path` into rbuf (NUL-terminated): children files are served a page per read. */
static ssize_t read_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    for (;;) {
        ssize_t n = read(fd, rbuf + off, sizeof(rbuf) - 1 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
        if (off == sizeof(rbuf) - 1)
            break;
    }
    close(fd);
    rbuf[off] = '\0';
    return (ssize_t)off;
}

/* discover: ROOT and its descendants from /proc/PID/task/TID/children (threads' children included). */
static int discover(pids_t *p, int32_t root)
{
    if (pids_add(p, root) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < p->n; i++) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)p->v[i], (int)p->v[i]);
        if (read_file(path) < 0)
            continue;
        char *save = NULL;
        for (char *tok = strtok_r(rbuf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
            if (pids_add(p, (int32_t)atoi(tok)) < 0)
                return -ENOMEM;
    }
    return 0;
}

static int64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* gap: sleep `ms` milliseconds before a pass (-i), as the sampler waits for its next deadline. */
static void gap(long ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double quant(const int64_t *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos, hi = lo + 1 < n ? lo + 1 : lo;
    return (double)v[lo] + ((double)v[hi] - (double)v[lo]) * (pos - (double)lo);
}

static uint64_t counted;

static int count_cb(const tasks_bpf_record_t *rec, void *arg)
{
    (void)rec;
    (void)arg;
    counted++;
    return 0;
}

typedef struct {
    int *fds;
    size_t n;
} kept_t;

static int kept_open(kept_t *k, const pids_t *p, const char *const *names, size_t nnames)
{
    k->n = p->n * nnames;
    k->fds = malloc(k->n * sizeof(*k->fds));
    if (!k->fds)
        return -ENOMEM;
    for (size_t i = 0; i < p->n; i++)
        for (size_t j = 0; j < nnames; j++) {
            char path[64];
            snprintf(path, sizeof(path), "/proc/%d/%s", (int)p->v[i], names[j]);
            k->fds[i * nnames + j] = open(path, O_RDONLY | O_CLOEXEC);
        }
    return 0;
}

static void kept_close(kept_t *k)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->fds[i] >= 0)
            close(k->fds[i]);
    free(k->fds);
}

/* one pass over kept descriptors; returns how many reads succeeded */
static uint64_t kept_pass(const kept_t *k)
{
    uint64_t ok = 0;
    for (size_t i = 0; i < k->n; i++)
        if (k->fds[i] >= 0 && pread(k->fds[i], pbuf, sizeof(pbuf), 0) > 0)
            ok++;
    return ok;
}

static void report(const char *method, const pids_t *p, int64_t *cpu, int64_t *wall, long s, uint64_t items,
                   const char *extra)
{
    qsort(cpu, (size_t)s, sizeof(*cpu), cmp_i64);
    qsort(wall, (size_t)s, sizeof(*wall), cmp_i64);
    double n = (double)p->n;
    printf("{\"method\": \"%s\", \"n_procs\": %zu, \"samples\": %ld, \"items_per_pass\": %llu, "
           "\"cpu_us\": {\"median\": %.3f, \"p10\": %.3f, \"p90\": %.3f}, "
           "\"cpu_us_per_proc\": {\"median\": %.4f, \"p10\": %.4f, \"p90\": %.4f}, "
           "\"wall_us\": {\"median\": %.3f}%s}\n",
           method, p->n, s, (unsigned long long)items, quant(cpu, (size_t)s, 0.5) / 1e3,
           quant(cpu, (size_t)s, 0.1) / 1e3, quant(cpu, (size_t)s, 0.9) / 1e3,
           quant(cpu, (size_t)s, 0.5) / 1e3 / n, quant(cpu, (size_t)s, 0.1) / 1e3 / n,
           quant(cpu, (size_t)s, 0.9) / 1e3 / n, quant(wall, (size_t)s, 0.5) / 1e3, extra ? extra : "");
    fflush(stdout);
}

static bool has_method(const char *list, const char *m)
{
    size_t ml = strlen(m);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == ml && strncmp(p, m, l) == 0)
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

int main(int argc, char **argv)
{
    long samples = 30, warmup = 5, gap_ms = 0;
    const char *cgroup = NULL, *methods = NULL;
    int32_t root = 0;
    pids_t p = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-s") == 0 && v) {
            samples = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "-w") == 0 && v) {
            warmup = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "-i") == 0 && v) {
            gap_ms = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--tree") == 0 && v) {
            root = (int32_t)atoi(v);
            i++;
        } else if (strcmp(a, "--cgroup") == 0 && v) {
            cgroup = v;
            i++;
        } else if (strcmp(a, "--methods") == 0 && v) {
            methods = v;
            i++;
        } else if (a[0] >= '1' && a[0] <= '9') {
            if (pids_add(&p, (int32_t)atoi(a)) < 0)
                return 1;
        } else {
            fprintf(stderr,
                    "usage: bpf_cost [-s S] [-w W] [-i MS] [--methods LIST] [--cgroup DIR] (--tree ROOT | "
                    "PID...)\n");
            return 2;
        }
    }
    if (root > 0 && discover(&p, root) < 0)
        return 1;
    if (p.n == 0 || samples < 1 || warmup < 0 || gap_ms < 0) {
        fprintf(stderr, "bpf_cost: no processes\n");
        return 2;
    }
    if (!methods)
        methods = cgroup ? "bpf-task,bpf-cgroup,procfs,stat,schedstat" : "bpf-task,procfs,stat,schedstat";
    struct rlimit rl = {65536, 65536};
    setrlimit(RLIMIT_NOFILE, &rl);
    int64_t *cpu = malloc((size_t)samples * sizeof(*cpu)), *wall = malloc((size_t)samples * sizeof(*wall));
    if (!cpu || !wall)
        return 1;

    js_fsroot_t fsr; /* the sysfs root: the loader reads the kernel's BTF there, as jobscope does */
    if (fsroot_open(&fsr, NULL, NULL) < 0)
        fsr.sys = -1;
    for (int m = 0; m < 2; m++) {
        const char *name = m == 0 ? "bpf-task" : "bpf-cgroup";
        if (!has_method(methods, name))
            continue;
        tasks_bpf_opts_t o;
        tasks_bpf_opts_init(&o);
        o.sys_fd = fsr.sys;
        if (m == 0) {
            o.mode = TASKS_BPF_TASKS;
            o.filter = true;
        } else {
            o.mode = TASKS_BPF_CGROUP;
            o.cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        char why[512];
        tasks_bpf_t *t;
        int64_t o0 = now_ns(CLOCK_MONOTONIC), oc0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        int r = tasks_bpf_open(&o, &t, why, sizeof(why));
        int64_t open_us = (now_ns(CLOCK_MONOTONIC) - o0) / 1000,
                open_cpu_us = (now_ns(CLOCK_PROCESS_CPUTIME_ID) - oc0) / 1000;
        if (r < 0) {
            printf("{\"method\": \"%s\", \"error\": \"%s\"}\n", name, why);
            continue;
        }
        if (m == 0 && tasks_bpf_set_pids(t, p.v, NULL, p.n) < 0)
            return 1;
        uint64_t items = 0;
        for (long k = 0; k < warmup + samples; k++) {
            gap(gap_ms);
            counted = 0;
            int64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
            r = tasks_bpf_read(t, count_cb, NULL);
            int64_t w1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
            if (r < 0) {
                fprintf(stderr, "bpf_cost: read: %s\n", strerror(-r));
                return 1;
            }
            if (k >= warmup) {
                cpu[k - warmup] = c1 - c0;
                wall[k - warmup] = w1 - w0;
                items = counted;
            }
        }
        tasks_bpf_info_t info;
        tasks_bpf_info(t, &info);
        char extra[256];
        snprintf(
            extra, sizeof(extra),
            ", \"open_wall_us\": %lld, \"open_cpu_us\": %lld, \"visited_per_pass\": %.1f, \"rss_exact\": %s",
            (long long)open_us, (long long)open_cpu_us, (double)info.visited,
            info.rss_exact ? "true" : "false");
        report(name, &p, cpu, wall, samples, items, extra);
        tasks_bpf_close(t);
    }

    static const char *const procfs_files[] = {"stat", "statm", "io"};
    static const char *const stat_files[] = {"stat"};
    static const char *const sched_files[] = {"schedstat"};
    const struct {
        const char *name;
        const char *const *files;
        size_t n;
    } pm[] = {{"procfs", procfs_files, 3}, {"stat", stat_files, 1}, {"schedstat", sched_files, 1}};
    for (size_t m = 0; m < sizeof(pm) / sizeof(pm[0]); m++) {
        if (!has_method(methods, pm[m].name))
            continue;
        kept_t k;
        if (kept_open(&k, &p, pm[m].files, pm[m].n) < 0)
            return 1;
        uint64_t items = 0;
        for (long s = 0; s < warmup + samples; s++) {
            gap(gap_ms);
            int64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
            uint64_t ok = kept_pass(&k);
            int64_t w1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
            if (s >= warmup) {
                cpu[s - warmup] = c1 - c0;
                wall[s - warmup] = w1 - w0;
                items = ok;
            }
        }
        report(pm[m].name, &p, cpu, wall, samples, items, NULL);
        kept_close(&k);
    }
    free(cpu);
    free(wall);
    free(p.v);
    return 0;
}
