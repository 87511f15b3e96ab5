/* SPDX-License-Identifier: MIT
 *
 * bpf_compare: reads a set of processes through the BPF task reader and through /proc at nearly the same
 * instant (one BPF pass, then each process's stat, statm, status, io, fd count and schedstat) and prints one
 * JSON object per pass for tests/integration/test_bpf_reader.py, which compares them field by field. Not
 * installed.
 *
 *   bpf_compare [--mode task|cgroup] [--cgroup DIR] [--all] [--follow] [--parent PID] [--passes K]
 *               [--interval-ms MS] [--sysfs DIR] [--available] [PID...]
 *
 *   --mode task (default)  iter/task with the PIDs given as the filter (--all: no filter, every process
 *                          visible in this PID namespace; --follow: children of the filtered ones too;
 *                          --parent PID: a filter entry whose children are reported, not itself)
 *   --mode cgroup          iter/cgroup over DIR and its descendants (PIDs ignored)
 *   --available            only print tasks_bpf_available()
 *   --sysfs DIR            the sysfs root handed to the reader (its kernel/btf/vmlinux is checked)
 *   --passes K, --interval-ms MS   K passes, MS milliseconds apart (default 1 pass)
 *   --drop PID --drop-at K  before pass K (default 1), the filter is set again without PID (PID may still
 * run)
 *   --kick PID --ack FILE --kick-every J   before every J-th pass (not the first), send SIGUSR1 to PID (0:
 *                          none) and wait (up to 60 s) until FILE holds the number of kicks so far: a
 * workload (or the test) that changes something between passes and says when it is done
 *
 * Output: {"available": {"rc", "errno", "why"}} or {"open": {...}} on failure (exit 3), else one line per
 * pass: {"pass": k, "info": {...}, "procs": [{"pid", "bpf": {...}, "proc": {...}}, ...]} where "proc" is null
 * for a process /proc no longer shows. Field names are the same in "bpf" and "proc"; a field /proc lacks
 * (no permission, no mm) is left out of "proc".
 */
#include "core/json.h"
#include "sources/bpf/tasks_bpf.h"
#include "sources/proc_tree.h"
#include "sources/schedstat.h"
#include "sys/fsroot.h"
#include "sys/parse.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    tasks_bpf_record_t *v;
    size_t n, cap;
} recs_t;

static int collect(const tasks_bpf_record_t *rec, void *arg)
{
    recs_t *r = arg;
    if (rec->flags & TASKS_BPF_PID_HIDDEN)
        return 0;
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 64;
        tasks_bpf_record_t *p = realloc(r->v, c * sizeof(*p));
        if (!p)
            return -ENOMEM;
        r->v = p;
        r->cap = c;
    }
    r->v[r->n++] = *rec;
    return 0;
}

static void put_str(const char *key, const char *s, size_t len, bool *first)
{
    js_buf_t b = {0};
    if (json_str(&b, s, len) == 0)
        printf("%s\"%s\": %s", *first ? "" : ", ", key, b.p);
    buf_free(&b);
    *first = false;
}

static void put_i(const char *key, long long v, bool *first)
{
    printf("%s\"%s\": %lld", *first ? "" : ", ", key, v);
    *first = false;
}

static void put_u(const char *key, unsigned long long v, bool *first)
{
    printf("%s\"%s\": %llu", *first ? "" : ", ", key, v);
    *first = false;
}

static const char *const io_names[7] = {
    "rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes", "cancelled_write_bytes"};

static void print_bpf(const tasks_bpf_record_t *r)
{
    bool f = true;
    printf("{");
    put_i("pid", r->pid, &f);
    put_i("ppid", r->ppid, &f);
    put_i("host_pid", r->host_pid, &f);
    put_i("host_ppid", r->host_ppid, &f);
    put_u("start_ticks", r->start_ticks, &f);
    put_str("state", &r->state, 1, &f);
    put_str("comm", r->comm, strlen(r->comm), &f);
    put_u("utime", r->utime_ticks, &f);
    put_u("stime", r->stime_ticks, &f);
    put_u("utime_ns", r->utime_ns, &f);
    put_u("stime_ns", r->stime_ns, &f);
    put_u("cpu_ns", r->cpu_ns, &f);
    put_u("cutime", r->cutime_ticks, &f);
    put_u("cstime", r->cstime_ticks, &f);
    put_i("threads", r->threads, &f);
    put_i("threads_walked", r->threads_walked, &f);
    put_u("minflt", r->minflt, &f);
    put_u("majflt", r->majflt, &f);
    put_u("cminflt", r->cminflt, &f);
    put_u("cmajflt", r->cmajflt, &f);
    put_i("processor", r->processor, &f);
    put_u("uid", r->uid, &f);
    put_u("vcsw", r->vcsw, &f);
    put_u("ivcsw", r->ivcsw, &f);
    put_u("group_vcsw", r->group_vcsw, &f);
    put_u("group_ivcsw", r->group_ivcsw, &f);
    for (int i = 0; i < 7; i++)
        put_u(io_names[i], r->io[i], &f);
    if (r->flags & TASKS_BPF_HAS_MM) {
        put_u("vsize", r->vsize_bytes, &f);
        put_u("stat_rss_pages", r->stat_rss_pages, &f);
        put_u("rss", r->rss_bytes, &f);
        put_u("shared", r->shared_bytes, &f);
        put_u("rss_anon", r->rss_anon_bytes, &f);
        put_u("rss_file", r->rss_file_bytes, &f);
        put_u("rss_shmem", r->rss_shmem_bytes, &f);
        put_u("swap", r->swap_bytes, &f);
        put_u("hwm", r->hwm_bytes, &f);
    } else {
        put_u("vsize", 0, &f);
        put_u("stat_rss_pages", 0, &f);
        put_u("rss", 0, &f);
        put_u("shared", 0, &f);
    }
    put_i("fds", r->fds, &f);
    put_u("flags", r->flags, &f);
    printf("}");
}

/* print_proc: the same fields from /proc/<pid>; false if the process is gone. */
static bool print_proc(const js_fsroot_t *root, int32_t pid, long page, js_buf_t *b)
{
    char path[64];
    js_pid_stat_t ps;
    snprintf(path, sizeof(path), "%d/stat", (int)pid);
    if (fs_read(root->proc, path, b) < 0 || parse_pid_stat(b->p, &ps) < 0)
        return false;
    bool f = true;
    printf("{");
    put_i("pid", ps.pid, &f);
    put_i("ppid", ps.ppid, &f);
    put_u("start_ticks", ps.starttime, &f);
    put_str("state", &ps.state, 1, &f);
    put_str("comm", ps.comm, strlen(ps.comm), &f);
    put_u("utime", ps.utime, &f);
    put_u("stime", ps.stime, &f);
    put_i("cutime", ps.cutime, &f);
    put_i("cstime", ps.cstime, &f);
    put_i("threads", ps.num_threads, &f);
    put_u("minflt", ps.minflt, &f);
    put_u("majflt", ps.majflt, &f);
    put_u("cminflt", ps.cminflt, &f);
    put_u("cmajflt", ps.cmajflt, &f);
    put_i("processor", ps.processor, &f);
    put_u("vsize", ps.vsize, &f);
    put_i("stat_rss_pages", ps.rss, &f);

    uint64_t res, shared;
    snprintf(path, sizeof(path), "%d/statm", (int)pid);
    if (fs_read(root->proc, path, b) == 0 && proc_parse_statm(b->p, &res, &shared) == 0) {
        put_u("rss", res * (uint64_t)page, &f);
        put_u("shared", shared * (uint64_t)page, &f);
    }
    snprintf(path, sizeof(path), "%d/status", (int)pid);
    js_pid_status_t st;
    if (fs_read(root->proc, path, b) == 0 && proc_parse_status(b->p, &st) == 0) {
        static const char *const names[8] = {"rss_anon", "rss_file", "rss_shmem", "swap",
                                             "hwm",      "vcsw",     "ivcsw",     "uid"};
        const uint64_t *vals[8] = {&st.rss_anon, &st.rss_file, &st.rss_shmem, &st.swap,
                                   &st.hwm,      &st.vcsw,     &st.ivcsw,     &st.uid};
        for (int i = 0; i < 8; i++)
            if (st.present & (1u << i))
                put_u(names[i], *vals[i], &f);
    }
    snprintf(path, sizeof(path), "%d/io", (int)pid);
    js_pid_io_t io;
    if (fs_read(root->proc, path, b) == 0 && proc_parse_io(b->p, &io) == 0)
        for (int i = 0; i < 7; i++)
            if (io.present & (1u << i))
                put_u(io_names[i], io.v[i], &f);
    struct stat s;
    snprintf(path, sizeof(path), "%d/fd", (int)pid);
    if (fstatat(root->proc, path, &s, 0) == 0)
        put_i("fds", (long long)s.st_size, &f);
    snprintf(path, sizeof(path), "%d/schedstat", (int)pid);
    js_schedstat_t ss;
    if (fs_read(root->proc, path, b) == 0 && proc_parse_schedstat(b->p, &ss) == 0)
        put_u("schedstat_run_ns", ss.run_ns, &f);
    printf("}");
    return true;
}

static void print_error(const char *what, int rc, const char *why)
{
    printf("{\"%s\": {\"rc\": %d, \"errno\": \"%s\", \"why\": ", what, rc,
           rc < 0 ? strerrorname_np(-rc) : "");
    js_buf_t b = {0};
    if (json_str(&b, why, strlen(why)) == 0)
        printf("%s", b.p);
    buf_free(&b);
    printf("}}\n");
}

static void usage(void)
{
    fprintf(stderr,
            "usage: bpf_compare [--mode task|cgroup] [--cgroup DIR] [--all] [--follow] [--parent PID] "
            "[--passes K] [--interval-ms MS] [--sysfs DIR] [--available] [PID...]\n");
}

/* settled: whether process `pid` sleeps (state S) and its runtime (schedstat) did not move over 20 ms: it has
 * finished what a kick made it do, also the steps after its ack (returning from the handler to its pause). */
static bool settled(const js_fsroot_t *root, pid_t pid, js_buf_t *b)
{
    char path[64];
    uint64_t run[2];
    for (int k = 0; k < 2; k++) {
        js_schedstat_t ss;
        js_pid_stat_t ps;
        snprintf(path, sizeof(path), "%d/schedstat", (int)pid);
        if (fs_read(root->proc, path, b) < 0 || proc_parse_schedstat(b->p, &ss) < 0)
            return false;
        run[k] = ss.run_ns;
        snprintf(path, sizeof(path), "%d/stat", (int)pid);
        if (fs_read(root->proc, path, b) < 0 || parse_pid_stat(b->p, &ps) < 0 || ps.state != 'S')
            return false;
        if (k == 0)
            usleep(20000);
    }
    return run[0] == run[1];
}

/* wait_kick: SIGUSR1 to `pid` (0: none; the test changes something itself), then until file `ack` holds the
 * number `n` and the kicked process has settled (60 s at most). */
static bool wait_kick(const js_fsroot_t *root, pid_t pid, const char *ack, long n, js_buf_t *b)
{
    if (pid > 0 && kill(pid, SIGUSR1) < 0)
        return false;
    bool acked = false;
    for (int i = 0; i < 6000; i++) {
        FILE *f = acked ? NULL : fopen(ack, "r");
        long got = -1;
        if (f) {
            if (fscanf(f, "%ld", &got) != 1)
                got = -1;
            fclose(f);
        }
        acked = acked || got == n;
        if (acked && (pid <= 0 || settled(root, pid, b)))
            return true;
        usleep(10000);
    }
    return false;
}

int main(int argc, char **argv)
{
    tasks_bpf_opts_t opts;
    tasks_bpf_opts_init(&opts);
    opts.filter = true;
    const char *cgroup = NULL, *sysfs = NULL;
    bool available_only = false;
    long passes = 1, interval_ms = 0, kick_every = 1, kicks = 0;
    pid_t kick = -1;
    int32_t drop = 0;
    long drop_at = 1;
    const char *ack = NULL;
    int32_t *pids = calloc((size_t)argc + 1, sizeof(*pids));
    uint8_t *how = calloc((size_t)argc + 1, sizeof(*how));
    size_t npids = 0;
    js_fsroot_t root = {-1, -1};
    tasks_bpf_t *t = NULL;
    js_buf_t b = {0};
    recs_t recs = {0};
    int rc = 0, r;
    if (!pids || !how) {
        rc = 1;
        goto out;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--mode") == 0 && v) {
            opts.mode = strcmp(v, "cgroup") == 0 ? TASKS_BPF_CGROUP : TASKS_BPF_TASKS;
            i++;
        } else if (strcmp(a, "--cgroup") == 0 && v) {
            cgroup = v;
            i++;
        } else if (strcmp(a, "--sysfs") == 0 && v) {
            sysfs = v;
            i++;
        } else if (strcmp(a, "--passes") == 0 && v) {
            passes = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--interval-ms") == 0 && v) {
            interval_ms = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--kick") == 0 && v) {
            kick = (pid_t)strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--drop") == 0 && v) {
            drop = (int32_t)strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--drop-at") == 0 && v) {
            drop_at = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--ack") == 0 && v) {
            ack = v;
            i++;
        } else if (strcmp(a, "--kick-every") == 0 && v) {
            kick_every = strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--parent") == 0 && v) {
            how[npids] = TASKS_BPF_PID_PARENT;
            pids[npids++] = (int32_t)strtol(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--all") == 0) {
            opts.filter = false;
        } else if (strcmp(a, "--follow") == 0) {
            opts.follow = true;
        } else if (strcmp(a, "--available") == 0) {
            available_only = true;
        } else if (a[0] >= '0' && a[0] <= '9') {
            how[npids] = TASKS_BPF_PID_MEMBER;
            pids[npids++] = (int32_t)strtol(a, NULL, 10);
        } else {
            usage();
            rc = 2;
            goto out;
        }
    }
    if (fsroot_open(&root, NULL, sysfs) < 0) {
        fprintf(stderr, "bpf_compare: cannot open /proc\n");
        rc = 1;
        goto out;
    }
    opts.sys_fd = root.sys;
    char why[512] = "";
    if (available_only) {
        r = tasks_bpf_available(opts.mode, root.sys, why, sizeof(why));
        print_error("available", r, why);
        goto out;
    }
    if (opts.mode == TASKS_BPF_CGROUP) {
        if (!cgroup) {
            usage();
            rc = 2;
            goto out;
        }
        opts.cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (opts.cgroup_fd < 0) {
            fprintf(stderr, "bpf_compare: %s: %s\n", cgroup, strerror(errno));
            rc = 1;
            goto out;
        }
    }
    r = tasks_bpf_open(&opts, &t, why, sizeof(why));
    if (opts.cgroup_fd >= 0)
        close(opts.cgroup_fd); /* only read during the open */
    if (r < 0) {
        print_error("open", r, why);
        rc = 3;
        goto out;
    }
    if (opts.mode == TASKS_BPF_TASKS && opts.filter && (r = tasks_bpf_set_pids(t, pids, how, npids)) < 0) {
        fprintf(stderr, "bpf_compare: set_pids: %s\n", strerror(-r));
        rc = 1;
        goto out;
    }
    long page = sysconf(_SC_PAGESIZE);
    for (long k = 0; k < passes; k++) {
        if (k && interval_ms > 0)
            usleep((useconds_t)interval_ms * 1000);
        if (k && kick >= 0 && ack && kick_every > 0 && k % kick_every == 0 &&
            !wait_kick(&root, kick, ack, ++kicks, &b)) {
            fprintf(stderr, "bpf_compare: no ack %ld from %d in %s\n", kicks, (int)kick, ack);
            rc = 1;
            goto out;
        }
        if (drop > 0 && k == drop_at && opts.mode == TASKS_BPF_TASKS && opts.filter) {
            size_t kept = 0;
            for (size_t i = 0; i < npids; i++)
                if (pids[i] != drop) {
                    pids[kept] = pids[i];
                    how[kept++] = how[i];
                }
            npids = kept;
            if ((r = tasks_bpf_set_pids(t, pids, how, npids)) < 0) {
                fprintf(stderr, "bpf_compare: set_pids: %s\n", strerror(-r));
                rc = 1;
                goto out;
            }
        }
        recs.n = 0;
        r = tasks_bpf_read(t, collect, &recs);
        if (r < 0) {
            fprintf(stderr, "bpf_compare: read: %s\n", strerror(-r));
            rc = 1;
            goto out;
        }
        tasks_bpf_info_t info;
        tasks_bpf_info(t, &info);
        printf("{\"pass\": %ld, \"info\": {\"mode\": \"%s\", \"rss_exact\": %s, \"pcpu_step\": %u, "
               "\"runs\": %llu, \"records\": %llu, \"grows\": %llu, \"loads\": %llu, \"capacity\": %u, "
               "\"visited\": %llu, \"reused\": %llu, "
               "\"cgroups\": %llu, \"filter_size\": %u}, \"procs\": [",
               k, info.mode, info.rss_exact ? "true" : "false", info.pcpu_step, (unsigned long long)info.runs,
               (unsigned long long)info.records, (unsigned long long)info.grows,
               (unsigned long long)info.loads, info.capacity, (unsigned long long)info.visited,
               (unsigned long long)info.reused, (unsigned long long)info.cgroups, info.filter_size);
        for (size_t i = 0; i < recs.n; i++) {
            printf("%s{\"pid\": %d, \"bpf\": ", i ? ", " : "", (int)recs.v[i].pid);
            print_bpf(&recs.v[i]);
            printf(", \"proc\": ");
            if (!print_proc(&root, recs.v[i].pid, page, &b))
                printf("null");
            printf("}");
        }
        printf("]}\n");
        fflush(stdout);
    }
out:
    buf_free(&b);
    free(recs.v);
    tasks_bpf_close(t);
    fsroot_close(&root);
    free(pids);
    free(how);
    return rc;
}
