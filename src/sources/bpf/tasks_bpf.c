/* SPDX-License-Identifier: MIT
 *
 * Loader of the BPF task reader (see tasks_bpf.h): checks privileges, BTF and kernel support, loads the
 * skeleton generated from tasks.bpf.c with libbpf, maps its output array, runs the program once per pass
 * (BPF_PROG_RUN) and turns each raw record into the figures /proc shows (ticks, bytes, the state letter,
 * cputime_adjust()). When a pass reports more processes than the array holds, a larger array takes its place
 * in the program's array of maps (no reload) and the pass is repeated. Without JOBSCOPE_HAVE_BPF only the
 * pure helpers are built and every entry point reports -EOPNOTSUPP.
 *
 * utime/stime: the kernel rescales tick-sampled times to the scheduler's runtime in cputime_adjust() and
 * stores the split it handed out in signal->prev_cputime, which keeps both monotonic. The BPF program cannot
 * store it, so the loader keeps, per process, the split it handed out last, and starts each computation from
 * whichever of the kernel's and its own has the larger sum (the more recent): what /proc would show if both
 * readers shared the kernel's state, and identical to /proc whenever /proc was read last.
 */
#include "sources/bpf/tasks_bpf.h"

#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- pure helpers ------------------------------------------------------------------------------------ */

__extension__ typedef unsigned __int128 tb_u128;

void tasks_bpf_cputime_adjust(uint64_t rtime, uint64_t utime, uint64_t stime, uint64_t prev_u,
                              uint64_t prev_s, uint64_t *ret_u, uint64_t *ret_s)
{
    uint64_t u, s;
    /* rtime not above what was handed out already: hand out the same again */
    if (prev_s + prev_u >= rtime) {
        *ret_u = prev_u;
        *ret_s = prev_s;
        return;
    }
    if (stime == 0) {
        s = 0; /* all user time until ticks say otherwise */
    } else if (utime == 0) {
        s = rtime;
    } else {
        /* mul_u64_u64_div_u64(stime, rtime, stime + utime), exact on x86-64 */
        s = (uint64_t)((tb_u128)stime * rtime / ((tb_u128)stime + utime));
        if (s > rtime)
            s = rtime;
    }
    if (s < prev_s)
        s = prev_s;
    u = rtime - s;
    if (u < prev_u) {
        u = prev_u;
        s = rtime - u;
    }
    *ret_u = u;
    *ret_s = s;
}

uint64_t tasks_bpf_ns_to_ticks(uint64_t ns, long clk_tck)
{
    if (clk_tck <= 0)
        return 0;
    if (1000000000 % clk_tck == 0)
        return ns / (uint64_t)(1000000000 / clk_tck);
    return (uint64_t)((tb_u128)ns * (uint64_t)clk_tck / 1000000000u);
}

char tasks_bpf_state_char(uint32_t state, uint32_t exit_state)
{
    /* include/linux/sched.h: TASK_REPORT = the bits below TASK_DEAD; TASK_IDLE = UNINTERRUPTIBLE | NOLOAD */
    enum {
        T_UNINTERRUPTIBLE = 0x2,
        T_REPORT = 0x7f,
        T_REPORT_IDLE = 0x80,
        T_NOLOAD = 0x400,
        T_RTLOCK_WAIT = 0x1000,
        T_FROZEN = 0x8000,
    };
    static const char letters[] = "RSDTtXZPI";
    uint32_t s = (state | exit_state) & T_REPORT;
    if ((state & (T_UNINTERRUPTIBLE | T_NOLOAD)) == (T_UNINTERRUPTIBLE | T_NOLOAD))
        s = T_REPORT_IDLE;
    if (state & (T_RTLOCK_WAIT | T_FROZEN))
        s = T_UNINTERRUPTIBLE;
    int idx = 0;
    while (s) { /* fls() */
        idx++;
        s >>= 1;
    }
    return letters[idx];
}

void tasks_bpf_opts_init(tasks_bpf_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->mode = TASKS_BPF_TASKS;
    opts->sys_fd = -1;
    opts->cgroup_fd = -1;
}

static void set_why(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
    if (!why || whylen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    if (n < 0)
        why[0] = '\0';
}

#ifndef JOBSCOPE_HAVE_BPF

int tasks_bpf_available(tasks_bpf_mode_t mode, int sys_fd, char *why, size_t whylen)
{
    (void)mode;
    (void)sys_fd;
    set_why(why, whylen, "built without the BPF reader (meson -Dbpf: needs clang, bpftool, libbpf and BTF)");
    return -EOPNOTSUPP;
}

int tasks_bpf_open(const tasks_bpf_opts_t *opts, tasks_bpf_t **ret, char *why, size_t whylen)
{
    (void)opts;
    *ret = NULL;
    return tasks_bpf_available(TASKS_BPF_TASKS, -1, why, whylen);
}

int tasks_bpf_set_pids(tasks_bpf_t *t, const int32_t *pids, const uint8_t *how, size_t n)
{
    (void)t;
    (void)pids;
    (void)how;
    (void)n;
    return -EOPNOTSUPP;
}

int tasks_bpf_read(tasks_bpf_t *t, tasks_bpf_record_cb cb, void *arg)
{
    (void)t;
    (void)cb;
    (void)arg;
    return -EOPNOTSUPP;
}

void tasks_bpf_info(const tasks_bpf_t *t, tasks_bpf_info_t *ret)
{
    (void)t;
    memset(ret, 0, sizeof(*ret));
    ret->mode = "none";
}

void tasks_bpf_close(tasks_bpf_t *t)
{
    (void)t;
}

#else /* JOBSCOPE_HAVE_BPF */

#include "core/pidmap.h"
#include "sources/bpf/tasks_bpf_raw.h"
#include "sys/fsroot.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the skeleton embeds the object as one long string literal */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
#pragma GCC diagnostic ignored "-Wpedantic"
#include "sources/bpf/tasks.skel.h"
#pragma GCC diagnostic pop

#define TB_CGROUP2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC */
#define TB_MIN_CAP 256u             /* records the output array holds at least */
#define TB_MAX_CAP (1u << 22)       /* and at most */

_Static_assert(sizeof(struct tasks_bpf_raw) % 8 == 0, "array values are laid out 8-byte aligned");

typedef struct {
    uint32_t pid;
    uint8_t how; /* TASKS_BPF_F_* as in the map */
} tb_pid_t;

/* per-process state: the last utime/stime split handed out (see the file comment) */
typedef struct {
    uint64_t start_ns;
    uint64_t prev_u, prev_s;
    uint64_t pass;
} tb_proc_t;

struct tasks_bpf {
    struct tasks_skel *skel;
    tasks_bpf_opts_t opts;
    uint64_t cgroup_id;
    int64_t pcpu_delta;
    uint32_t cap;                    /* records the output array holds */
    const struct tasks_bpf_raw *out; /* the output array, mapped read-only */
    size_t out_len;
    int out_fd; /* the output array in use when it replaced the skeleton's, else -1 */
    long clk_tck, page;
    uint64_t passes, runs, records, grows, loads;
    tb_pid_t *pids; /* the filter as the map holds it, sorted by pid */
    size_t npids, pids_cap;
    bool filter_dirty; /* the filter lost or changed an entry since the last run of the program */
    js_pidmap_t procs; /* host pid -> tb_proc_t */
    size_t seen;       /* entries of `procs` converted in the current pass (each counted once) */
    uint64_t reused;   /* records reused in place (flag TASKS_BPF_R_SAME), all passes */
};

/* ---- libbpf's messages: kept instead of printed (library code prints nothing) ---- */

static char tb_last_msg[200]; /* the first line of libbpf's first warning that says "failed" (or its first) */
static char tb_verifier[200]; /* the verifier's complaint: the log line before "processed N insns" */

static void keep_line(char *dst, size_t cap, const char *s, size_t len)
{
    while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
        len--;
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

static int tb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        return 0;
    const char *end = strstr(msg, "-- END PROG LOAD LOG --");
    if (end) {
        const char *last = NULL;
        for (const char *p = msg; (p = strstr(p, "\nprocessed ")) && p < end; p++)
            last = p;
        if (last) {
            const char *start = last;
            while (start > msg && start[-1] != '\n')
                start--;
            if (start < last)
                keep_line(tb_verifier, sizeof(tb_verifier), start, (size_t)(last - start));
        }
    } else {
        const char *nl = strchr(msg, '\n');
        size_t len = nl ? (size_t)(nl - msg) : strlen(msg);
        bool failed = memmem(msg, len, "fail", 4) != NULL;
        if (len && (!tb_last_msg[0] || (failed && !strstr(tb_last_msg, "fail"))))
            keep_line(tb_last_msg, sizeof(tb_last_msg), msg, len);
    }
    free(msg);
    return 0;
}

/* ---- checks ---- */

static bool has_cap(const struct __user_cap_data_struct d[2], unsigned cap)
{
    return (d[cap / 32].effective >> (cap % 32)) & 1u;
}

static int check_privilege(char *why, size_t whylen)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof(d));
    if (syscall(SYS_capget, &h, d) < 0) {
        int e = errno;
        set_why(why, whylen, "cannot read this process's capabilities: %s", strerror(e));
        return -e;
    }
    /* CAP_PERFMON 38, CAP_BPF 39, CAP_SYS_ADMIN 21 */
    if ((has_cap(d, 38) && has_cap(d, 39)) || has_cap(d, 21))
        return 0;
    set_why(why, whylen, "needs CAP_BPF and CAP_PERFMON (or root)");
    return -EPERM;
}

static int check_btf_file(int sys_fd, char *why, size_t whylen)
{
    if (sys_fd < 0)
        return 0;
    const char *fault = getenv("JOBSCOPE_BPF_FAULT");
    const char *path =
        fault && strcmp(fault, "btf") == 0 ? "kernel/btf/vmlinux.absent" : "kernel/btf/vmlinux";
    if (faccessat(sys_fd, path, R_OK, 0) < 0) {
        int e = errno;
        set_why(why, whylen, "no kernel BTF (sysfs %s: %s)", path, strerror(e));
        return -ENOENT;
    }
    return 0;
}

/* The kernel's BTF is scanned here by hand rather than parsed with libbpf's btf__load_vmlinux_btf(): libbpf
 * parses it again for the load itself (CO-RE), and a full parse copies the 5 MB file twice and indexes its
 * 126,000 types (10-20 ms of CPU), where the checks need a handful of names. The file is mapped where sysfs
 * allows it (Linux >= 6.16), else read. */

typedef struct {
    const char *const *funcs; /* FUNC names that must exist */
    size_t nfuncs;
    const char *missing; /* the first of them not found, or NULL */
    int64_t pcpu_delta;  /* offset of runqueues minus that of this_cpu_off in .data..percpu, or 0 */
} btf_scan_t;

/* btf_type_extra: bytes that follow the 12-byte struct btf_type of `kind` with `vlen` entries, or -1 for a
 * kind this scanner does not know (the scan stops there). */
static long btf_type_extra(unsigned kind, unsigned vlen)
{
    switch (kind) {
    case BTF_KIND_INT:
    case BTF_KIND_VAR:
    case 17: /* BTF_KIND_DECL_TAG */
        return 4;
    case BTF_KIND_ARRAY:
        return 12;
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION:
    case BTF_KIND_DATASEC:
    case 19: /* BTF_KIND_ENUM64 */
        return 12L * vlen;
    case BTF_KIND_ENUM:
    case BTF_KIND_FUNC_PROTO:
        return 8L * vlen;
    case BTF_KIND_PTR:
    case BTF_KIND_FWD:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_CONST:
    case BTF_KIND_RESTRICT:
    case BTF_KIND_FUNC:
    case 16: /* BTF_KIND_FLOAT */
    case 18: /* BTF_KIND_TYPE_TAG */
        return 0;
    default:
        return -1;
    }
}

/* btf_scan: walk the raw BTF in `data` once: which of sc->funcs exist, and sc->pcpu_delta. Returns 0 or
 * -EINVAL (not BTF, or damaged). */
static int btf_scan(const unsigned char *data, size_t size, btf_scan_t *sc)
{
    struct btf_header h;
    if (size < sizeof(h))
        return -EINVAL;
    memcpy(&h, data, sizeof(h));
    if (h.magic != BTF_MAGIC || h.hdr_len < sizeof(h) || h.hdr_len > size ||
        (uint64_t)h.hdr_len + h.type_off + h.type_len > size ||
        (uint64_t)h.hdr_len + h.str_off + h.str_len > size)
        return -EINVAL;
    const unsigned char *types = data + h.hdr_len + h.type_off, *strs = data + h.hdr_len + h.str_off;
    bool found[8] = {false};
    uint32_t var_rq = 0, var_tco = 0;
    size_t percpu_at = SIZE_MAX;
    uint32_t id = 1;
    for (size_t off = 0; off + sizeof(struct btf_type) <= h.type_len; id++) {
        struct btf_type t;
        memcpy(&t, types + off, sizeof(t));
        unsigned kind = BTF_INFO_KIND(t.info), vlen = BTF_INFO_VLEN(t.info);
        long extra = btf_type_extra(kind, vlen);
        if (extra < 0 || off + sizeof(t) + (size_t)extra > h.type_len)
            return -EINVAL;
        const char *name = t.name_off < h.str_len ? (const char *)strs + t.name_off : "";
        if (kind == BTF_KIND_FUNC) {
            for (size_t i = 0; i < sc->nfuncs && i < 8; i++)
                if (!found[i] && strcmp(name, sc->funcs[i]) == 0)
                    found[i] = true;
        } else if (kind == BTF_KIND_VAR) {
            if (strcmp(name, "runqueues") == 0)
                var_rq = id;
            else if (strcmp(name, "this_cpu_off") == 0)
                var_tco = id;
        } else if (kind == BTF_KIND_DATASEC && strcmp(name, ".data..percpu") == 0) {
            percpu_at = off;
        }
        off += sizeof(t) + (size_t)extra;
    }
    sc->missing = NULL;
    for (size_t i = 0; i < sc->nfuncs && !sc->missing; i++)
        if (i >= 8 || !found[i])
            sc->missing = sc->funcs[i];
    int64_t off_rq = -1, off_tco = -1;
    if (percpu_at != SIZE_MAX && var_rq && var_tco) {
        struct btf_type t;
        memcpy(&t, types + percpu_at, sizeof(t));
        const unsigned char *v = types + percpu_at + sizeof(t);
        for (unsigned i = 0; i < BTF_INFO_VLEN(t.info); i++, v += sizeof(struct btf_var_secinfo)) {
            struct btf_var_secinfo vs;
            memcpy(&vs, v, sizeof(vs));
            if (vs.type == var_rq)
                off_rq = vs.offset;
            else if (vs.type == var_tco)
                off_tco = vs.offset;
        }
    }
    sc->pcpu_delta = off_rq >= 0 && off_tco >= 0 ? off_rq - off_tco : 0;
    return 0;
}

/* check_kernel: the kfuncs `mode` needs exist in the kernel's BTF (kernel/btf/vmlinux under the sysfs root
 * `sys_fd`, or libbpf's own location when -1); sets *ret_delta from .data..percpu. */
static int check_kernel(tasks_bpf_mode_t mode, int sys_fd, int64_t *ret_delta, char *why, size_t whylen)
{
    static const char *const need_task[] = {"bpf_iter_task_new", "bpf_iter_num_new", "bpf_rcu_read_lock",
                                            "bpf_rdonly_cast"};
    static const char *const need_cgroup[] = {
        "bpf_iter_task_new", "bpf_iter_num_new",      "bpf_rcu_read_lock", "bpf_rdonly_cast",
        "bpf_iter_css_new",  "bpf_iter_css_task_new", "bpf_cgroup_from_id"};
    btf_scan_t sc = {.funcs = mode == TASKS_BPF_CGROUP ? need_cgroup : need_task,
                     .nfuncs = mode == TASKS_BPF_CGROUP ? sizeof(need_cgroup) / sizeof(need_cgroup[0])
                                                        : sizeof(need_task) / sizeof(need_task[0])};
    int fd = sys_fd >= 0 ? fs_open(sys_fd, "kernel/btf/vmlinux") : -1; /* a regular file, never blocks */
    struct stat st;
    int r = -ENOENT;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
        size_t size = (size_t)st.st_size;
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            r = btf_scan(m, size, &sc);
            munmap(m, size);
        } else {
            unsigned char *buf = malloc(size);
            size_t got = 0;
            ssize_t n = 1;
            while (buf && got < size && (n = pread(fd, buf + got, size - got, (off_t)got)) > 0)
                got += (size_t)n;
            r = buf && got == size ? btf_scan(buf, size, &sc) : buf ? -EIO : -ENOMEM;
            free(buf);
        }
    }
    if (fd >= 0)
        close(fd);
    if (fd < 0 || r < 0) { /* no sysfs root given, or its file is unusable: libbpf's full parse */
        struct btf *btf = btf__load_vmlinux_btf();
        if (!btf) {
            int e = errno ? errno : ENOENT;
            set_why(why, whylen, "cannot load the kernel's BTF: %s", strerror(e));
            return -ENOENT;
        }
        sc.missing = NULL;
        for (size_t i = 0; i < sc.nfuncs && !sc.missing; i++)
            if (btf__find_by_name_kind(btf, sc.funcs[i], BTF_KIND_FUNC) < 0)
                sc.missing = sc.funcs[i];
        int64_t off_rq = -1, off_tco = -1;
        int sec = !sc.missing ? btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC) : -1;
        if (sec > 0) {
            const struct btf_type *t = btf__type_by_id(btf, (uint32_t)sec);
            const struct btf_var_secinfo *v = btf_var_secinfos(t);
            for (unsigned i = 0; i < btf_vlen(t); i++, v++) {
                const struct btf_type *var = btf__type_by_id(btf, v->type);
                const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;
                if (name && strcmp(name, "runqueues") == 0)
                    off_rq = v->offset;
                else if (name && strcmp(name, "this_cpu_off") == 0)
                    off_tco = v->offset;
            }
        }
        sc.pcpu_delta = off_rq >= 0 && off_tco >= 0 ? off_rq - off_tco : 0;
        btf__free(btf);
    }
    if (sc.missing) {
        set_why(why, whylen, "kernel lacks %s (Linux >= 6.7 needed)", sc.missing);
        *ret_delta = 0;
        return -ENOSYS;
    }
    *ret_delta = sc.pcpu_delta;
    return 0;
}

int tasks_bpf_available(tasks_bpf_mode_t mode, int sys_fd, char *why, size_t whylen)
{
    if (mode < 0 || mode >= TASKS_BPF_MODE_MAX) {
        set_why(why, whylen, "unknown mode");
        return -EINVAL;
    }
    int r = check_privilege(why, whylen);
    if (r == 0)
        r = check_btf_file(sys_fd, why, whylen);
    int64_t delta;
    if (r == 0)
        r = check_kernel(mode, sys_fd, &delta, why, whylen);
    return r;
}

/* ---- open / close ---- */

/* unload: unmap `out` and destroy the skeleton. */
static void unload(tasks_bpf_t *t)
{
    if (t->out)
        munmap((void *)t->out, t->out_len);
    t->out = NULL;
    if (t->out_fd >= 0)
        close(t->out_fd);
    t->out_fd = -1;
    tasks_skel__destroy(t->skel);
    t->skel = NULL;
}

void tasks_bpf_close(tasks_bpf_t *t)
{
    if (!t)
        return;
    unload(t);
    pidmap_free(&t->procs);
    free(t->pids);
    free(t);
}

/* load: open and load the skeleton with an output array of t->cap records and map it; on failure the reason
 * names the step and libbpf's last message, and t->skel is NULL. */
static int load(tasks_bpf_t *t, char *why, size_t whylen)
{
    libbpf_print_fn_t old_print = libbpf_set_print(tb_print);
    tb_last_msg[0] = tb_verifier[0] = '\0';
    const char *what = "open";
    int r = 0;
    t->skel = tasks_skel__open();
    if (!t->skel) {
        r = errno ? -errno : -ENOMEM;
        goto fail;
    }
    int ncpus = libbpf_num_possible_cpus();
    int64_t delta = t->pcpu_delta;
    if (ncpus <= 0 || ncpus > TASKS_BPF_MAX_CPUS) {
        ncpus = ncpus <= 0 ? 1 : TASKS_BPF_MAX_CPUS;
        delta = 0; /* cannot sum every CPU: RSS from the counters alone */
    }
    const tasks_bpf_opts_t *o = &t->opts;
    t->skel->rodata->mode = o->mode == TASKS_BPF_CGROUP;
    t->skel->rodata->cgroup_id = t->cgroup_id;
    t->skel->rodata->cgroup_self_only = o->cgroup_self_only;
    t->skel->rodata->filter_on = o->mode == TASKS_BPF_TASKS && o->filter;
    t->skel->rodata->follow = o->mode == TASKS_BPF_TASKS && o->filter && o->follow;
    t->skel->rodata->nr_cpus = (uint32_t)ncpus;
    t->skel->rodata->pcpu_delta = delta;
    uint32_t max_pids = o->max_pids ? o->max_pids : 65536;
    const char *fault = getenv("JOBSCOPE_BPF_FAULT");
    if (fault && strcmp(fault, "load") == 0)
        max_pids = 0; /* a hash map of no entries: the kernel refuses to create it */
    bpf_map__set_max_entries(t->skel->maps.pid_filter, max_pids);
    bpf_map__set_max_entries(t->skel->maps.out, t->cap);
    t->skel->bss->reuse = getenv("JOBSCOPE_BPF_NO_REUSE") ? 0 : 1;
    what = "load";
    r = tasks_skel__load(t->skel);
    if (r < 0)
        goto fail;
    t->loads++;
    what = "map";
    size_t page = (size_t)t->page;
    t->out_len = ((size_t)t->cap * sizeof(struct tasks_bpf_raw) + page - 1) / page * page;
    void *m = mmap(NULL, t->out_len, PROT_READ, MAP_SHARED, bpf_map__fd(t->skel->maps.out), 0);
    if (m == MAP_FAILED) {
        r = -errno;
        goto fail;
    }
    t->out = m;
    libbpf_set_print(old_print);
    return 0;

fail:
    libbpf_set_print(old_print);
    if (r >= 0)
        r = -EINVAL;
    set_why(why, whylen, "BPF %s failed: %s%s%s%s%s", what, strerror(-r),
            tb_verifier[0] ? ": verifier: " : "", tb_verifier, tb_last_msg[0] ? ": " : "", tb_last_msg);
    unload(t);
    return r;
}

/* cgroup_id_of: the ID of the cgroup v2 directory open as `fd` (its inode number). */
static int cgroup_id_of(int fd, uint64_t *ret, char *why, size_t whylen)
{
    struct statfs sfs;
    struct stat st;
    if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        set_why(why, whylen, "cgroup directory: %s", strerror(e));
        return -e;
    }
    if ((unsigned long)sfs.f_type != TB_CGROUP2_MAGIC || !S_ISDIR(st.st_mode)) {
        set_why(why, whylen, "not a cgroup v2 directory");
        return -EINVAL;
    }
    *ret = (uint64_t)st.st_ino;
    return 0;
}

int tasks_bpf_open(const tasks_bpf_opts_t *opts, tasks_bpf_t **ret, char *why, size_t whylen)
{
    *ret = NULL;
    if (!opts || opts->mode < 0 || opts->mode >= TASKS_BPF_MODE_MAX ||
        (opts->mode == TASKS_BPF_CGROUP && opts->cgroup_fd < 0 && opts->cgroup_id == 0)) {
        set_why(why, whylen, "bad options");
        return -EINVAL;
    }
    int r = check_privilege(why, whylen);
    if (r == 0)
        r = check_btf_file(opts->sys_fd, why, whylen);
    int64_t delta = 0;
    if (r == 0)
        r = check_kernel(opts->mode, opts->sys_fd, &delta, why, whylen);
    uint64_t cgid = opts->cgroup_id;
    if (r == 0 && opts->mode == TASKS_BPF_CGROUP && opts->cgroup_fd >= 0)
        r = cgroup_id_of(opts->cgroup_fd, &cgid, why, whylen);
    if (r < 0)
        return r;

    tasks_bpf_t *t = calloc(1, sizeof(*t));
    if (!t) {
        set_why(why, whylen, "out of memory");
        return -ENOMEM;
    }
    t->opts = *opts;
    t->cgroup_id = cgid;
    t->pcpu_delta = delta;
    t->out_fd = -1;
    /* room for the processes the caller expects and a quarter more: growing later needs no reload, but
     * costs the pass that found the array too small */
    uint64_t want = (uint64_t)opts->expect + opts->expect / 4;
    t->cap = want < TB_MIN_CAP ? TB_MIN_CAP : want > TB_MAX_CAP ? TB_MAX_CAP : (uint32_t)want;
    pidmap_init(&t->procs, sizeof(tb_proc_t));
    t->clk_tck = sysconf(_SC_CLK_TCK);
    if (t->clk_tck <= 0)
        t->clk_tck = 100;
    t->page = sysconf(_SC_PAGESIZE);
    if (t->page <= 0)
        t->page = 4096;
    r = load(t, why, whylen);
    if (r < 0) {
        tasks_bpf_close(t);
        return r;
    }
    *ret = t;
    return 0;
}

/* ---- the PID filter ---- */

static int cmp_tb_pid(const void *a, const void *b)
{
    uint32_t x = ((const tb_pid_t *)a)->pid, y = ((const tb_pid_t *)b)->pid;
    return (x > y) - (x < y);
}

static tb_pid_t *shadow_find(tasks_bpf_t *t, uint32_t pid)
{
    tb_pid_t key = {.pid = pid};
    return t->npids ? bsearch(&key, t->pids, t->npids, sizeof(*t->pids), cmp_tb_pid) : NULL;
}

int tasks_bpf_set_pids(tasks_bpf_t *t, const int32_t *pids, const uint8_t *how, size_t n)
{
    if (!t || t->opts.mode != TASKS_BPF_TASKS || !t->opts.filter)
        return -EINVAL;
    uint32_t max_pids = t->opts.max_pids ? t->opts.max_pids : 65536;
    if (n > max_pids)
        return -ENOSPC;
    tb_pid_t *want = malloc((n ? n : 1) * sizeof(*want));
    if (!want)
        return -ENOMEM;
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) {
        if (pids[i] <= 0)
            continue;
        uint8_t h = how && how[i] == TASKS_BPF_PID_PARENT ? TASKS_BPF_F_PARENT : TASKS_BPF_F_MEMBER;
        want[nw++] = (tb_pid_t){.pid = (uint32_t)pids[i], .how = h};
    }
    qsort(want, nw, sizeof(*want), cmp_tb_pid);
    /* duplicates: keep MEMBER over PARENT */
    size_t k = 0;
    for (size_t i = 0; i < nw; i++) {
        if (k && want[k - 1].pid == want[i].pid)
            want[k - 1].how |= want[i].how;
        else
            want[k++] = want[i];
    }
    nw = k;
    int fd = bpf_map__fd(t->skel->maps.pid_filter);
    int r = 0;
    /* merge walk over the two sorted lists: delete what is no longer wanted, write what differs */
    size_t i = 0, j = 0;
    while ((i < t->npids || j < nw) && r == 0) {
        if (j >= nw || (i < t->npids && t->pids[i].pid < want[j].pid)) {
            t->filter_dirty = true;
            if (bpf_map_delete_elem(fd, &t->pids[i].pid) < 0 && errno != ENOENT)
                r = -errno;
            i++;
        } else if (i >= t->npids || want[j].pid < t->pids[i].pid) {
            if (bpf_map_update_elem(fd, &want[j].pid, &want[j].how, BPF_ANY) < 0)
                r = -errno;
            j++;
        } else {
            if ((t->pids[i].how & ~TASKS_BPF_F_AUTO) != want[j].how) {
                t->filter_dirty = true;
                if (bpf_map_update_elem(fd, &want[j].pid, &want[j].how, BPF_ANY) < 0)
                    r = -errno;
            }
            i++;
            j++;
        }
    }
    if (r < 0) {
        t->filter_dirty = true;
        /* the map is now somewhere between the two sets: forget what it holds, rebuild it from scratch */
        uint32_t key, next;
        bool first = true;
        while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
            bpf_map_delete_elem(fd, &next);
            first = false;
            key = next;
        }
        free(t->pids);
        t->pids = NULL;
        t->npids = t->pids_cap = 0;
        free(want);
        return r;
    }
    free(t->pids);
    t->pids = want;
    t->npids = nw;
    t->pids_cap = n ? n : 1;
    return 0;
}

/* shadow_add: the BPF program added `pid` to the map (DISCOVERED): mirror it. */
static int shadow_add(tasks_bpf_t *t, uint32_t pid)
{
    if (shadow_find(t, pid))
        return 0;
    if (t->npids == t->pids_cap) {
        size_t c = t->pids_cap ? t->pids_cap * 2 : 64;
        tb_pid_t *p = realloc(t->pids, c * sizeof(*p));
        if (!p)
            return -ENOMEM;
        t->pids = p;
        t->pids_cap = c;
    }
    size_t at = t->npids;
    while (at > 0 && t->pids[at - 1].pid > pid) {
        t->pids[at] = t->pids[at - 1];
        at--;
    }
    t->pids[at] = (tb_pid_t){.pid = pid, .how = TASKS_BPF_F_MEMBER | TASKS_BPF_F_AUTO};
    t->npids++;
    return 0;
}

/* ---- one pass ---- */

static uint64_t pages_pos(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

/* convert: the raw record to what /proc shows. */
static void convert(tasks_bpf_t *t, const struct tasks_bpf_raw *w, tasks_bpf_record_t *o)
{
    memset(o, 0, sizeof(*o));
    o->pid = w->pid;
    o->ppid = w->ppid;
    o->host_pid = w->host_pid;
    o->host_ppid = w->host_ppid;
    o->start_ns = w->start_ns;
    o->start_ticks = tasks_bpf_ns_to_ticks(w->start_ns, t->clk_tck);
    o->state = tasks_bpf_state_char(w->state, w->exit_state);

    /* the previous split: the kernel's or this reader's, whichever is more recent (larger sum) */
    uint64_t pu = w->prev_utime, ps = w->prev_stime;
    int fresh = 0;
    tb_proc_t *p = pidmap_put(&t->procs, w->host_pid, &fresh);
    if (p && !fresh && p->start_ns == w->start_ns && p->prev_u + p->prev_s > pu + ps) {
        pu = p->prev_u;
        ps = p->prev_s;
    }
    tasks_bpf_cputime_adjust(w->sum_exec, w->utime, w->stime, pu, ps, &o->utime_ns, &o->stime_ns);
    if (p) {
        t->seen += fresh || p->pass != t->passes + 1;
        p->start_ns = w->start_ns;
        p->prev_u = o->utime_ns;
        p->prev_s = o->stime_ns;
        p->pass = t->passes + 1;
    }
    o->utime_ticks = tasks_bpf_ns_to_ticks(o->utime_ns, t->clk_tck);
    o->stime_ticks = tasks_bpf_ns_to_ticks(o->stime_ns, t->clk_tck);
    o->cpu_ns = w->sum_exec;
    o->cutime_ticks = tasks_bpf_ns_to_ticks(w->cutime, t->clk_tck);
    o->cstime_ticks = tasks_bpf_ns_to_ticks(w->cstime, t->clk_tck);
    o->threads = w->nr_threads;
    o->threads_walked = w->threads_walked;
    o->minflt = w->min_flt;
    o->majflt = w->maj_flt;
    o->cminflt = w->cmin_flt;
    o->cmajflt = w->cmaj_flt;
    o->vcsw = w->nvcsw;
    o->ivcsw = w->nivcsw;
    o->group_vcsw = w->group_nvcsw;
    o->group_ivcsw = w->group_nivcsw;
    memcpy(o->io, w->io, sizeof(o->io));
    o->processor = (int32_t)w->cpu;
    o->uid = w->uid;
    memcpy(o->comm, w->comm, sizeof(w->comm));
    o->comm[sizeof(w->comm)] = '\0';

    uint32_t f = 0;
    if (w->flags & TASKS_BPF_R_MM) {
        uint64_t page = (uint64_t)t->page;
        f |= TASKS_BPF_HAS_MM;
        uint64_t file = pages_pos(w->rss_sum[TASKS_BPF_RSS_FILE]),
                 anon = pages_pos(w->rss_sum[TASKS_BPF_RSS_ANON]),
                 shmem = pages_pos(w->rss_sum[TASKS_BPF_RSS_SHMEM]),
                 swap = pages_pos(w->rss_sum[TASKS_BPF_RSS_SWAP]);
        uint64_t total = file + anon + shmem;
        o->vsize_bytes = w->total_vm * page;
        o->stat_rss_pages = pages_pos(w->rss_count[TASKS_BPF_RSS_FILE]) +
                            pages_pos(w->rss_count[TASKS_BPF_RSS_ANON]) +
                            pages_pos(w->rss_count[TASKS_BPF_RSS_SHMEM]);
        o->rss_bytes = total * page;
        o->shared_bytes = (file + shmem) * page;
        o->rss_anon_bytes = anon * page;
        o->rss_file_bytes = file * page;
        o->rss_shmem_bytes = shmem * page;
        o->swap_bytes = swap * page;
        o->hwm_bytes = (w->hiwater_rss > total ? w->hiwater_rss : total) * page;
    }
    if (w->flags & TASKS_BPF_R_RSS_EXACT)
        f |= TASKS_BPF_RSS_EXACT;
    if (w->flags & TASKS_BPF_R_FILES) {
        f |= TASKS_BPF_HAS_FDS;
        o->fds = w->fds;
    }
    if (w->flags & TASKS_BPF_R_RACED)
        f |= TASKS_BPF_RACED;
    if (w->flags & TASKS_BPF_R_DISCOVERED)
        f |= TASKS_BPF_DISCOVERED;
    if (w->flags & TASKS_BPF_R_PID_HIDDEN)
        f |= TASKS_BPF_PID_HIDDEN;
    if (w->flags & TASKS_BPF_R_KTHREAD)
        f |= TASKS_BPF_KTHREAD;
    if (w->flags & TASKS_BPF_R_SAME)
        f |= TASKS_BPF_REUSED;
    o->flags = f;
}

/* forget: drop per-process state of processes not seen in the pass that just ended; nothing to do (no walk)
 * when every entry was seen in it. */
static void forget(tasks_bpf_t *t, uint64_t pass)
{
    if (t->seen == t->procs.count)
        return;
    for (size_t i = 0; i < t->procs.cap;) {
        tb_proc_t *p;
        int32_t pid = pidmap_at(&t->procs, i, (void **)&p);
        if (pid && p->pass != pass) {
            pidmap_del(&t->procs, pid); /* shifts a later entry into slot i: look at it again */
            continue;
        }
        i++;
    }
}

/* grow: room for `need` records (and a quarter more): a new output array takes the old one's place in `outs`
 * (the program finds it there at its next run: nothing is loaded or verified again). Returns 0, -E2BIG (over
 * TB_MAX_CAP), or the error of creating, mapping or installing the array (the old one stays in use then). */
static int grow(tasks_bpf_t *t, uint64_t need)
{
    uint32_t cap = t->cap;
    while (cap < need + need / 4 && cap < TB_MAX_CAP)
        cap *= 2;
    if (cap < need)
        return -E2BIG;
    struct bpf_map_create_opts mo = {.sz = sizeof(mo), .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP};
    int fd =
        bpf_map_create(BPF_MAP_TYPE_ARRAY, "out", sizeof(uint32_t), sizeof(struct tasks_bpf_raw), cap, &mo);
    if (fd < 0)
        return -errno;
    size_t page = (size_t)t->page;
    size_t len = ((size_t)cap * sizeof(struct tasks_bpf_raw) + page - 1) / page * page;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    uint32_t zero = 0;
    int r = 0;
    if (m == MAP_FAILED)
        r = -errno;
    else if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.outs), &zero, &fd, BPF_ANY) < 0)
        r = -errno;
    if (r < 0) {
        if (m != MAP_FAILED)
            munmap(m, len);
        close(fd);
        return r;
    }
    munmap((void *)t->out, t->out_len);
    if (t->out_fd >= 0)
        close(t->out_fd);
    t->out = m;
    t->out_len = len;
    t->out_fd = fd;
    t->cap = cap;
    t->grows++;
    return 0;
}

int tasks_bpf_read(tasks_bpf_t *t, tasks_bpf_record_cb cb, void *arg)
{
    if (!t || !cb)
        return -EINVAL;
    if (!t->skel)
        return -ENODEV;
    uint64_t n = 0;
    for (int attempt = 0;; attempt++) {
        LIBBPF_OPTS(bpf_test_run_opts, ro);
        /* a process in its last pass's slot is a member still, unless the filter lost or changed an entry */
        t->skel->bss->filter_kept = !t->filter_dirty;
        if (bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.run), &ro) < 0)
            return -errno;
        t->filter_dirty = false;
        t->runs++;
        if (t->skel->bss->stats.root_gone)
            return -ENOENT; /* the scope's cgroup was removed */
        n = t->skel->bss->stats.matched;
        if (n <= t->cap)
            break;
        /* more processes than room: the pass is discarded and run again with a larger array (empty: every
         * record of that pass is a full one) */
        if (attempt >= 3)
            return -E2BIG;
        int r = grow(t, n);
        if (r < 0)
            return r;
    }
    int r = 0;
    t->seen = 0;
    for (uint64_t i = 0; i < n && r == 0; i++) {
        const struct tasks_bpf_raw *w = &t->out[i];
        if (w->size != sizeof(*w)) {
            r = -EPROTO;
            break;
        }
        t->reused += (w->flags & TASKS_BPF_R_SAME) != 0;
        if ((w->flags & TASKS_BPF_R_DISCOVERED) && w->pid > 0 && shadow_add(t, (uint32_t)w->pid) < 0) {
            r = -ENOMEM;
            break;
        }
        tasks_bpf_record_t rec;
        convert(t, w, &rec);
        t->records++;
        int c = cb(&rec, arg);
        if (c < 0)
            r = c;
    }
    if (r == 0) {
        t->passes++;
        forget(t, t->passes);
    }
    return r;
}

void tasks_bpf_info(const tasks_bpf_t *t, tasks_bpf_info_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!t) {
        ret->mode = "none";
        return;
    }
    ret->mode = t->opts.mode == TASKS_BPF_CGROUP ? "cgroup" : "tasks";
    ret->passes = t->passes;
    ret->runs = t->runs;
    ret->records = t->records;
    ret->grows = t->grows;
    ret->loads = t->loads;
    ret->reused = t->reused;
    ret->capacity = t->cap;
    ret->filter_size = (uint32_t)t->npids;
    if (!t->skel)
        return;
    const struct tasks_bpf_stats *s = &t->skel->bss->stats;
    ret->rss_exact = s->pcpu_state == 1;
    ret->pcpu_step = (unsigned)s->pcpu_step;
    ret->visited = s->visited;
    ret->cgroups = s->cgroups;
}

#endif /* JOBSCOPE_HAVE_BPF */
