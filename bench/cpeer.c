// SPDX-License-Identifier: MIT
/*
 * cpeer: the JUmPER-style C peer pattern, what a native collector that opens and closes its files costs.
 * Every sample it rediscovers the tree (open, read, close of /proc/PID/task/PID/children from the root down)
 * and, per process, opens, reads to EOF and closes /proc/PID/stat, /proc/PID/statm, /proc/PID/io and
 * /proc/PID/status: four open/read/close triples per process per sample, as JUmPER's native collector does.
 * It parses nothing beyond the children lists and stores nothing. Its CPU time per sample
 * (CLOCK_PROCESS_CPUTIME_ID from the start of one sample to the start of the next: the timer wake-up is in
 * it) is reported as in bench/floor, the same JSON fields, so bench/bench.py reads both alike.
 *
 * usage: cpeer [-s S] [-w W] [-i SECONDS] --tree ROOT_PID
 */
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

static const char *const file_names[] = {"stat", "statm", "io", "status"};
#define NFILES (sizeof(file_names) / sizeof(file_names[0]))

static char read_buf[1 << 16];

typedef struct {
    int *v;
    size_t n, cap;
} pids_t;

static int pids_add(pids_t *p, int pid)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        int *nv = realloc(p->v, cap * sizeof(*nv));
        if (!nv)
            return -ENOMEM;
        p->v = nv;
        p->cap = cap;
    }
    p->v[p->n++] = pid;
    return 0;
}

/* read_path: open, read to EOF (into read_buf, NUL-terminated; a longer file is cut), close. Bytes or -errno.
 */
static ssize_t read_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    for (;;) {
        ssize_t r = read(fd, read_buf + off, sizeof(read_buf) - 1 - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        off += (size_t)r;
        if (off == sizeof(read_buf) - 1)
            break;
    }
    close(fd);
    read_buf[off] = '\0';
    return (ssize_t)off;
}

/* sample_once: the tree from `root` found again, then every member's four files. Returns bytes read; failed
 * reads (a process that just exited) are counted in *ret_errors; *ret_n is the number of processes. */
static int64_t sample_once(pids_t *ps, int root, int64_t *ret_errors, size_t *ret_n)
{
    char path[64];
    int64_t bytes = 0;
    ps->n = 0;
    if (pids_add(ps, root) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < ps->n; i++) {
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", ps->v[i], ps->v[i]);
        ssize_t len = read_path(path);
        if (len < 0) {
            (*ret_errors)++;
            continue;
        }
        bytes += len;
        for (char *p = read_buf; *p;) {
            char *end;
            long pid = strtol(p, &end, 10);
            if (end == p)
                break;
            if (pids_add(ps, (int)pid) < 0)
                return -ENOMEM;
            p = end;
            while (*p == ' ' || *p == '\n')
                p++;
        }
    }
    for (size_t i = 0; i < ps->n; i++)
        for (size_t f = 0; f < NFILES; f++) {
            snprintf(path, sizeof(path), "/proc/%d/%s", ps->v[i], file_names[f]);
            ssize_t r = read_path(path);
            if (r < 0)
                (*ret_errors)++;
            else
                bytes += r;
        }
    *ret_n = ps->n;
    return bytes;
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
    int root = 0;
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
            root = atoi(v);
            i++;
        } else {
            fprintf(stderr, "usage: cpeer [-s SAMPLES] [-w WARMUP] [-i SECONDS] --tree ROOT_PID\n");
            return 2;
        }
    }
    if (samples < 1 || warmup < 0 || interval < 0 || root <= 0) {
        fprintf(stderr, "usage: cpeer [-s SAMPLES] [-w WARMUP] [-i SECONDS] --tree ROOT_PID\n");
        return 2;
    }
    int64_t *cycle = malloc((size_t)samples * sizeof(*cycle));
    int64_t *collect = malloc((size_t)samples * sizeof(*collect));
    int64_t *wall = malloc((size_t)samples * sizeof(*wall));
    pids_t ps = {0};
    if (!cycle || !collect || !wall) {
        perror("cpeer: malloc");
        return 1;
    }
    int64_t errors = 0, bytes = 0;
    size_t nprocs = 0;
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
        int64_t b = sample_once(&ps, root, &errors, &nprocs);
        int64_t w1 = now_ns(CLOCK_MONOTONIC);
        int64_t c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        if (b < 0) {
            fprintf(stderr, "cpeer: %s\n", strerror((int)-b));
            return 1;
        }
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
    printf(
        "{\"tool\": \"cpeer\", \"n_procs\": %zu, \"samples\": %ld, \"warmup\": %ld, \"interval_s\": %.6f, ",
        nprocs, samples, warmup, interval);
    printf("\"files_per_process\": %zu, \"bytes_read_per_sample\": %.1f, \"read_errors\": %lld, ", NFILES,
           (double)bytes / (double)samples, (long long)errors);
    printf("\"cpu_per_sample_us_raw\": [");
    for (long k = 0; k < samples; k++)
        printf("%s%.3f", k ? ", " : "", (double)cycle[k] / 1e3);
    printf("], ");
    print_stats("cpu_per_sample_us", cycle, (size_t)samples);
    printf(", ");
    print_stats("collect_cpu_us", collect, (size_t)samples);
    printf(", ");
    print_stats("collect_wall_us", wall, (size_t)samples);
    printf(", \"rusage_mean_us\": %.3f, \"cputime_mean_us\": %.3f, \"max_rss_bytes\": %lld}\n",
           (double)ru_total / (double)samples / 1e3, (double)cpu_total / (double)samples / 1e3,
           vmhwm_bytes());
    free(cycle);
    free(collect);
    free(wall);
    free(ps.v);
    return 0;
}
