// SPDX-License-Identifier: MIT
/*
 * floor: the C floor of a sample, what sampling a process tree cannot cost less than. It reads the same /proc
 * files as jobscope's default metric set and nothing else:
 *
 *   per process, every sample: /proc/PID/stat, /proc/PID/statm, /proc/PID/io and /proc/PID/task/PID/children,
 *   each with one kept descriptor, pread() from offset 0 to EOF (see read_all() for how EOF is told), plus
 * the open-fd count as st_size of /proc/PID/fd (Linux
 * >= 6.2), by fstat() on a kept O_PATH descriptor (fstatat(fd, "", AT_EMPTY_PATH)), which skips even the path
 * walk.
 *
 * It does not parse, does not rediscover the tree (the tree is discovered once, at start-up, from the
 * children files), does not store anything. Its CPU time per sample (CLOCK_PROCESS_CPUTIME_ID read around
 * each sample) is reported as median and spread over S samples after W warm-up samples, and cross-checked
 * with getrusage() over the same S samples. Output: one JSON object on stdout.
 *
 * usage: floor [-s S] [-w W] [-i SECONDS] (--tree ROOT_PID | PID...)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    FILE_STAT,
    FILE_STATM,
    FILE_IO,
    FILE_CHILDREN,
    FILE_MAX,
};

static const char *const file_names[FILE_MAX] = {"stat", "statm", "io", NULL /* task/PID/children */};

typedef struct {
    int pid;
    int fds[FILE_MAX];
    int fd_dir; /* O_PATH on /proc/PID/fd */
} floor_proc_t;

typedef struct {
    floor_proc_t *v;
    size_t n, cap;
} floor_procs_t;

static char *read_buf;
static size_t read_buf_len = 1 << 16;

static void usage(void)
{
    fprintf(stderr, "usage: floor [-s SAMPLES] [-w WARMUP] [-i SECONDS] (--tree ROOT_PID | PID...)\n");
}

static int64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t rusage_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/*
 * Reads fd from offset 0 to EOF into read_buf; returns bytes read or -errno. A single-record procfs file
 * (stat, statm, io: one show() into a buffer grown to fit) is complete after a short read; a multi-record
 * seq_file (children) returns at most about a page per read, so only a read of 0 bytes ends it.
 */
static ssize_t read_all(int fd, bool multi_record)
{
    size_t off = 0;
    for (;;) {
        if (off == read_buf_len) {
            char *nb = realloc(read_buf, read_buf_len * 2);
            if (!nb)
                return -ENOMEM;
            read_buf = nb;
            read_buf_len *= 2;
        }
        ssize_t r = pread(fd, read_buf + off, read_buf_len - off, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        off += (size_t)r;
        if (r == 0 || (!multi_record && off < read_buf_len))
            return (ssize_t)off;
    }
}

static int procs_add(floor_procs_t *ps, int pid)
{
    for (size_t i = 0; i < ps->n; i++)
        if (ps->v[i].pid == pid)
            return 0;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        floor_proc_t *nv = realloc(ps->v, cap * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        ps->v = nv;
        ps->cap = cap;
    }
    floor_proc_t *p = &ps->v[ps->n];
    p->pid = pid;
    char path[64];
    for (int f = 0; f < FILE_MAX; f++) {
        if (f == FILE_CHILDREN)
            snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
        else
            snprintf(path, sizeof(path), "/proc/%d/%s", pid, file_names[f]);
        p->fds[f] = open(path, O_RDONLY | O_CLOEXEC);
        if (p->fds[f] < 0) {
            int e = errno;
            fprintf(stderr, "floor: open %s: %s\n", path, strerror(e));
            return -e;
        }
    }
    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    p->fd_dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (p->fd_dir < 0) {
        int e = errno;
        fprintf(stderr, "floor: open %s: %s\n", path, strerror(e));
        return -e;
    }
    ps->n++;
    return 0;
}

/* Adds ps->v[i] and, breadth first, every descendant found through the children files. */
static int procs_discover(floor_procs_t *ps, int root)
{
    int r = procs_add(ps, root);
    if (r < 0)
        return r;
    for (size_t i = 0; i < ps->n; i++) {
        ssize_t len = read_all(ps->v[i].fds[FILE_CHILDREN], true);
        if (len < 0)
            return (int)len;
        /* read_all may move read_buf; parse a copy. */
        char *copy = malloc((size_t)len + 1);
        if (!copy)
            return -ENOMEM;
        memcpy(copy, read_buf, (size_t)len);
        copy[len] = '\0';
        char *save = NULL;
        for (char *tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
            r = procs_add(ps, atoi(tok));
            if (r < 0)
                break;
        }
        free(copy);
        if (r < 0)
            return r;
    }
    return 0;
}

/* This process's own peak RSS (VmHWM). Unlike ru_maxrss it does not carry over the peak of the image that
 * ran before exec() (the harness that started us). Returns bytes, or -1. */
static long long vmhwm_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return -1;
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

static int raise_nofile(size_t need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    if (rl.rlim_cur >= need)
        return 0;
    rl.rlim_cur = need;
    if (rl.rlim_max < need)
        rl.rlim_max = need; /* works as root */
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    return 0;
}

/* One sample: every kept file read to EOF, every fd count taken. Returns bytes read; counts failed reads in
 * *ret_errors and adds the fd counts to *ret_fds. */
static int64_t sample_once(const floor_procs_t *ps, int64_t *ret_errors, int64_t *ret_fds)
{
    int64_t bytes = 0;
    for (size_t i = 0; i < ps->n; i++) {
        const floor_proc_t *p = &ps->v[i];
        for (int f = 0; f < FILE_MAX; f++) {
            ssize_t r = read_all(p->fds[f], f == FILE_CHILDREN);
            if (r < 0)
                (*ret_errors)++;
            else
                bytes += r;
        }
        struct stat st;
        if (fstatat(p->fd_dir, "", &st, AT_EMPTY_PATH) < 0)
            (*ret_errors)++;
        else
            *ret_fds += st.st_size; /* the open-fd count */
    }
    return bytes;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank quantile of a sorted array. */
static double quantile(const int64_t *sorted, size_t n, double q)
{
    if (n == 0)
        return 0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return (double)sorted[lo] * (1 - frac) + (double)sorted[hi] * frac;
}

static void print_stats(const char *name, int64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_i64);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)v[i];
    printf("\"%s\": {\"median\": %.3f, \"p10\": %.3f, \"p90\": %.3f, \"min\": %.3f, \"max\": %.3f, "
           "\"mean\": %.3f}",
           name, quantile(v, n, 0.5) / 1e3, quantile(v, n, 0.1) / 1e3, quantile(v, n, 0.9) / 1e3,
           n ? (double)v[0] / 1e3 : 0.0, n ? (double)v[n - 1] / 1e3 : 0.0, n ? sum / (double)n / 1e3 : 0.0);
}

int main(int argc, char **argv)
{
    long samples = 30, warmup = 5;
    double interval = 0.1;
    int tree_root = 0;
    floor_procs_t ps = {0};
    int *pids = NULL;
    size_t npids = 0;

    pids = malloc((size_t)argc * sizeof(*pids));
    read_buf = malloc(read_buf_len);
    if (!pids || !read_buf) {
        perror("floor: malloc");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-s") == 0 && v) {
            samples = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "-w") == 0 && v) {
            warmup = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "-i") == 0 && v) {
            interval = strtod(v, NULL);
            i++;
        } else if (strcmp(a, "--tree") == 0 && v) {
            tree_root = atoi(v);
            i++;
        } else if (a[0] >= '1' && a[0] <= '9') {
            pids[npids++] = atoi(a);
        } else {
            usage();
            return 2;
        }
    }
    if (samples < 1 || warmup < 0 || interval < 0 || (tree_root <= 0 && npids == 0)) {
        usage();
        return 2;
    }
    /* Enough descriptors for a large tree: 5 per process plus slack; raised again if discovery needs more. */
    if (raise_nofile(65536) < 0 && raise_nofile(16384) < 0)
        fprintf(stderr, "floor: cannot raise RLIMIT_NOFILE, large trees may fail\n");

    int r = 0;
    if (tree_root > 0)
        r = procs_discover(&ps, tree_root);
    for (size_t i = 0; r == 0 && i < npids; i++)
        r = procs_add(&ps, pids[i]);
    if (r < 0) {
        fprintf(stderr, "floor: %s\n", strerror(-r));
        return 1;
    }

    /* cycle[k]: CPU from the start of sample k to the start of sample k+1, which is what a monitor pays per
     * sample (collect, plus the timer wake-up and sleep); collect[k]: the reads alone; wall[k]: their wall
     * time. */
    int64_t *cycle = malloc((size_t)samples * sizeof(*cycle));
    int64_t *collect = malloc((size_t)samples * sizeof(*collect));
    int64_t *wall = malloc((size_t)samples * sizeof(*wall));
    if (!cycle || !collect || !wall) {
        perror("floor: malloc");
        return 1;
    }
    int64_t errors = 0, bytes = 0, fds = 0;
    int64_t step = (int64_t)(interval * 1e9);
    int64_t deadline = now_ns(CLOCK_MONOTONIC);
    int64_t ru_start = 0, cpu_start = 0, cpu_prev = 0;
    for (long k = 0;; k++) {
        int64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        if (k > warmup)
            cycle[k - 1 - warmup] = c0 - cpu_prev;
        cpu_prev = c0;
        if (k == warmup) {
            ru_start = rusage_cpu_ns();
            cpu_start = c0;
        }
        if (k == warmup + samples)
            break;
        int64_t w0 = now_ns(CLOCK_MONOTONIC);
        int64_t b = sample_once(&ps, &errors, &fds);
        int64_t w1 = now_ns(CLOCK_MONOTONIC);
        int64_t c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        if (k >= warmup) {
            collect[k - warmup] = c1 - c0;
            wall[k - warmup] = w1 - w0;
            bytes += b;
        }
        deadline += step;
        if (step > 0 && deadline > now_ns(CLOCK_MONOTONIC)) {
            struct timespec ts = {.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        } else {
            deadline = now_ns(CLOCK_MONOTONIC);
        }
    }
    int64_t cpu_total = now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
    int64_t ru_total = rusage_cpu_ns() - ru_start;

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf(
        "{\"tool\": \"floor\", \"n_procs\": %zu, \"samples\": %ld, \"warmup\": %ld, \"interval_s\": %.6f, ",
        ps.n, samples, warmup, interval);
    printf("\"files_per_process\": %d, \"bytes_read_per_sample\": %.1f, \"read_errors\": %lld, "
           "\"open_fds_counted_per_sample\": %lld, ",
           FILE_MAX, (double)bytes / (double)samples, (long long)errors,
           (long long)(fds / (warmup + samples)));
    printf("\"cpu_per_sample_us_raw\": [");
    for (long k = 0; k < samples; k++)
        printf("%s%.3f", k ? ", " : "", (double)cycle[k] / 1e3);
    printf("], ");
    print_stats("cpu_per_sample_us", cycle, (size_t)samples);
    printf(", ");
    print_stats("collect_cpu_us", collect, (size_t)samples);
    printf(", ");
    print_stats("collect_wall_us", wall, (size_t)samples);
    printf(", \"rusage_mean_us\": %.3f, \"cputime_mean_us\": %.3f, \"max_rss_bytes\": %lld, "
           "\"ru_maxrss_bytes\": %lld}\n",
           (double)ru_total / (double)samples / 1e3, (double)cpu_total / (double)samples / 1e3, vmhwm_bytes(),
           (long long)ru.ru_maxrss * 1024);
    free(cycle);
    free(collect);
    free(wall);
    free(pids);
    free(read_buf);
    return 0;
}
