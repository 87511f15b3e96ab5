/* SPDX-License-Identifier: MIT
 *
 * The end of a batch job's work as a monitor sees it (see jobend.h): the SLURM batch shell that only waits
 * for the monitor's launcher, and for PBS and OAR the job's processes on the node gone.
 */
#include "core/jobend.h"

#include "core/pidmap.h"
#include "sys/parse.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TREE 512             /* processes looked at under one child of the batch shell */
#define MIN_GAP_NS 400000000LL   /* two positive checks at least this far apart */
#define SCAN_GAP_NS 1000000000LL /* listings of the procfs root at most once a second */
#define BATCH_SCANS 10           /* listings without a verdict before this node is taken for another */

/* PBS/OAR: what is known of a process (by PID, checked against its start time) */
typedef struct {
    uint64_t start;
    uint64_t seen; /* check stamp */
    int8_t job;    /* 1: carries the job's id in its environment, -1: does not, 0: not known yet */
} pent_t;

struct js_jobend {
    const js_fsroot_t *root;
    js_batch_kind_t kind;
    char job[64], node[128];
    int port;
    pid_t self;
    js_buf_t buf;
    /* SLURM */
    int batch; /* 1 this node runs the batch script, 0 another, -1 unknown */
    int scans;
    int64_t next_scan_ns;
    int32_t stepd;
    uint64_t stepd_start;
    uint64_t sock; /* inode of the launcher srun's listening socket, 0 until found */
    int32_t launcher;
    uint64_t launcher_start;
    /* both */
    int hits;
    int64_t last_hit_ns;
    /* PBS/OAR */
    js_pidmap_t procs;
    uint64_t stamp;
    bool seen_work;
    int64_t next_pbs_ns;
};

int jobend_new(const js_fsroot_t *root, const js_jobend_cfg_t *cfg, js_jobend_t **ret)
{
    js_jobend_t *e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->root = root;
    e->kind = cfg->kind;
    snprintf(e->job, sizeof(e->job), "%s", cfg->job ? cfg->job : "");
    snprintf(e->node, sizeof(e->node), "%s", cfg->node ? cfg->node : "");
    e->port = cfg->srun_port;
    e->self = cfg->self;
    e->batch = -1;
    pidmap_init(&e->procs, sizeof(pent_t));
    *ret = e;
    return 0;
}

void jobend_free(js_jobend_t *e)
{
    if (!e)
        return;
    buf_free(&e->buf);
    pidmap_free(&e->procs);
    free(e);
}

int jobend_batch_node(const js_jobend_t *e)
{
    return e->kind == JS_BATCH_SLURM ? e->batch : -1;
}

bool jobend_wchan_waits(const char *w)
{
    static const char *const names[] = {"do_wait",   "kernel_wait4",  "__do_sys_wait4",
                                        "do_waitid", "kernel_waitid", "__do_sys_waitid"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(w, names[i], n) && (w[n] == '\0' || w[n] == '.' || w[n] == '\n'))
            return true;
    }
    return false;
}

uint64_t jobend_listen_inode(const char *text, int port)
{
    /* "  sl  local_address rem_address   st ... uid  timeout inode": local_address is HEX_IP:HEX_PORT, st 0A
     * is LISTEN, the inode is the tenth field */
    const char *line = strchr(text, '\n');
    while (line && *++line) {
        char local[80], st[8];
        unsigned long long inode;
        int n = sscanf(line, "%*s %79s %*s %7s %*s %*s %*s %*s %*s %llu", local, st, &inode);
        const char *colon = n == 3 ? strrchr(local, ':') : NULL;
        if (colon && !strcmp(st, "0A") && strtol(colon + 1, NULL, 16) == port && inode)
            return inode;
        line = strchr(line, '\n');
    }
    return 0;
}

/* ---- procfs reads ---- */

static int read_stat(const js_jobend_t *e, int32_t pid, js_pid_stat_t *ps)
{
    char path[32], text[1024];
    snprintf(path, sizeof(path), "%d/stat", (int)pid);
    ssize_t n = fs_read_small(e->root->proc, path, text, sizeof(text));
    if (n <= 0)
        return n < 0 ? (int)n : -ENOENT;
    return parse_pid_stat(text, ps);
}

/* children: every child of every thread of `pid` into out (at most cap); their number. */
static size_t children(js_jobend_t *e, int32_t pid, int32_t *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "%d/task", (int)pid);
    js_pid_iter_t it;
    if (pid_iter_open(&it, e->root->proc, path) < 0)
        return 0;
    size_t n = 0;
    int32_t tid;
    while (n < cap && (tid = pid_iter_next(&it)) > 0) {
        snprintf(path, sizeof(path), "%d/task/%d/children", (int)pid, (int)tid);
        if (fs_read(e->root->proc, path, &e->buf) < 0)
            continue;
        const char *p = e->buf.p;
        uint64_t c;
        while (n < cap && parse_u64(&p, &c) == 0) {
            out[n++] = (int32_t)c;
            while (*p == ' ')
                p++;
        }
    }
    pid_iter_close(&it);
    return n;
}

/* env_value: the value of NAME in the environment of `pid` (copied into val), or -errno. */
static int env_value(js_jobend_t *e, int32_t pid, const char *name, char *val, size_t cap)
{
    char path[32];
    snprintf(path, sizeof(path), "%d/environ", (int)pid);
    int r = fs_read(e->root->proc, path, &e->buf);
    if (r < 0)
        return r;
    size_t len = strlen(name);
    for (size_t i = 0; i < e->buf.len; i += strlen(e->buf.p + i) + 1)
        if (!strncmp(e->buf.p + i, name, len) && e->buf.p[i + len] == '=') {
            snprintf(val, cap, "%s", e->buf.p + i + len + 1);
            return 0;
        }
    return -ENOENT;
}

/* voluntary: the task's voluntary context switches (its status), or UINT64_MAX when unreadable. */
static uint64_t voluntary(js_jobend_t *e, int32_t pid)
{
    char path[32];
    uint64_t v;
    snprintf(path, sizeof(path), "%d/status", (int)pid);
    if (fs_read(e->root->proc, path, &e->buf) < 0 || kv_u64(e->buf.p, "voluntary_ctxt_switches:", &v) < 0)
        return UINT64_MAX;
    return v;
}

/* waits: 1 when the task's wchan says wait(2), 0 when it says something else, -1 when the kernel does not
 * tell ("0", unreadable). */
static int waits(js_jobend_t *e, int32_t pid)
{
    char path[32], text[128];
    snprintf(path, sizeof(path), "%d/wchan", (int)pid);
    ssize_t n = fs_read_small(e->root->proc, path, text, sizeof(text));
    if (n <= 0 || !strcmp(text, "0"))
        return -1;
    return jobend_wchan_waits(text);
}

/* has_socket: whether process `pid` holds socket inode `inode` among its descriptors. */
static bool has_socket(const js_jobend_t *e, int32_t pid, uint64_t inode)
{
    char path[64], want[48], link[64];
    snprintf(path, sizeof(path), "%d/fd", (int)pid);
    snprintf(want, sizeof(want), "socket:[%" PRIu64 "]", inode);
    DIR *d;
    if (fs_opendir(e->root->proc, path, &d) < 0)
        return false;
    bool found = false;
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            found = !strcmp(link, want);
        }
    }
    closedir(d);
    return found;
}

/* find_socket: the inode of the launcher srun's listening socket (IPv4, then IPv6), 0 if not (yet) seen. */
static uint64_t find_socket(js_jobend_t *e)
{
    if (e->sock || e->port <= 0)
        return e->sock;
    static const char *const files[] = {"net/tcp", "net/tcp6"};
    for (size_t i = 0; i < 2 && !e->sock; i++)
        if (fs_read(e->root->proc, files[i], &e->buf) == 0)
            e->sock = jobend_listen_inode(e->buf.p, e->port);
    return e->sock;
}

/* ---- SLURM ---- */

/* find_batch: look for the job's `slurmstepd: [JOB.batch]` and whether its script runs on this node (its
 * shell's SLURMD_NODENAME). */
static void find_batch(js_jobend_t *e, int64_t now)
{
    if (now < e->next_scan_ns)
        return;
    e->next_scan_ns = now + SCAN_GAP_NS;
    js_pid_iter_t it;
    if (pid_iter_open(&it, e->root->proc, ".") < 0)
        return;
    bool undecided = false;
    int32_t pid;
    while (e->batch < 0 && (pid = pid_iter_next(&it)) > 0) {
        js_pid_stat_t ps;
        if (read_stat(e, pid, &ps) < 0 || strcmp(ps.comm, "slurmstepd") != 0)
            continue;
        char path[32], text[256], job[64], step[32];
        snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
        ssize_t n = fs_read_small(e->root->proc, path, text, sizeof(text));
        if (n <= 0 || stepd_parse_cmdline(text, (size_t)n, job, sizeof(job), step, sizeof(step)) < 0 ||
            strcmp(job, e->job) != 0 || strcmp(step, "batch") != 0)
            continue;
        int32_t kids[8];
        size_t nk = children(e, pid, kids, 8);
        char node[128] = "";
        for (size_t i = 0; i < nk && !node[0]; i++)
            if (env_value(e, kids[i], "SLURMD_NODENAME", node, sizeof(node)) < 0)
                node[0] = '\0';
        if (!node[0]) {
            undecided = true; /* no script yet, or not readable yet: look again */
            continue;
        }
        e->batch = !strcmp(node, e->node); /* the script runs here, or on another node */
        e->stepd = pid;
        e->stepd_start = ps.starttime;
    }
    pid_iter_close(&it);
    if (e->batch < 0 && !undecided && ++e->scans >= BATCH_SCANS)
        e->batch = 0; /* the script runs on another host: only the shared verdict ends this monitor */
}

/* find_launcher: the monitor's launcher in the batch step's process tree: the srun listening on the
 * monitor's SLURM_SRUN_COMM_PORT (an srun first, then any process), else the monitor itself (launched from
 * the script without srun). Cached while it lives. */
static int32_t find_launcher(js_jobend_t *e)
{
    js_pid_stat_t ps;
    if (e->launcher && read_stat(e, e->launcher, &ps) == 0 && ps.starttime == e->launcher_start)
        return e->launcher;
    e->launcher = 0;
    int32_t *q = malloc(MAX_TREE * sizeof(*q));
    if (!q)
        return 0;
    size_t n = children(e, e->stepd, q, MAX_TREE);
    for (size_t i = 0; i < n && n < MAX_TREE; i++)
        n += children(e, q[i], q + n, MAX_TREE - n);
    uint64_t sock = find_socket(e);
    for (int pass = 0; pass < 3 && !e->launcher; pass++)
        for (size_t i = 0; i < n && !e->launcher; i++) {
            if (read_stat(e, q[i], &ps) < 0)
                continue;
            bool hit = pass == 0   ? sock && !strcmp(ps.comm, "srun") && has_socket(e, q[i], sock)
                       : pass == 1 ? sock && strcmp(ps.comm, "srun") != 0 && has_socket(e, q[i], sock)
                                   : q[i] == e->self;
            if (hit) {
                e->launcher = q[i];
                e->launcher_start = ps.starttime;
            }
        }
    free(q);
    return e->launcher;
}

/* slurm_idle: whether the batch script only waits for the monitor's launcher. The processes from the batch
 * step's task down to the launcher (the script's shell, and wrappers such as time(1) above it) must each
 * sleep in wait(2) with no live child but the next one on that path, down to the first that does not wait
 * (the launcher: srun, or mpirun above it); each must stay in the same wait while this is read. */
static bool slurm_idle(js_jobend_t *e)
{
    js_pid_stat_t ps;
    if (read_stat(e, e->stepd, &ps) < 0 || ps.starttime != e->stepd_start)
        return false; /* the batch step is gone: the job is ending anyway */
    int32_t l = find_launcher(e);
    if (!l)
        return false;
    int32_t chain[32] = {0};
    size_t n = 0;
    for (int32_t p = l; p != e->stepd; p = ps.ppid) { /* from the launcher up to the batch step */
        if (n == 32 || p <= 1 || read_stat(e, p, &ps) < 0)
            return false;
        chain[n++] = p;
    }
    uint64_t vcsw[32];
    size_t waiting = 0;
    for (size_t k = n; k-- > 0;) { /* top down: chain[n-1] is the batch step's task */
        int32_t p = chain[k];
        if (p == l)
            break;
        vcsw[waiting] = voluntary(e, p);
        int w = waits(e, p);
        if (read_stat(e, p, &ps) < 0 || ps.state != 'S' || w == 0 || vcsw[waiting] == UINT64_MAX) {
            if (k == n - 1)
                return false; /* the script itself does not wait */
            break;            /* the launcher (mpirun polls) and what is below it */
        }
        int32_t kids[64];
        size_t nk = children(e, p, kids, 64);
        for (size_t i = 0; i < nk; i++) {
            js_pid_stat_t cs;
            if (kids[i] == chain[k - 1] || read_stat(e, kids[i], &cs) < 0 || cs.state == 'Z' ||
                cs.state == 'X')
                continue; /* the path, or exited (the wait reaps it) */
            return false; /* other work: a command in the foreground, a step in the background */
        }
        waiting++;
    }
    if (!waiting)
        return false;
    /* the same waits throughout: no voluntary switch in between, and still in wait(2) */
    for (size_t k = n, i = 0; k-- > 0 && i < waiting; i++)
        if (voluntary(e, chain[k]) != vcsw[i] || waits(e, chain[k]) == 0)
            return false;
    return true;
}

/* ---- PBS and OAR ---- */

static bool in_list(const int32_t *l, size_t n, int32_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (l[i] == pid)
            return true;
    return false;
}

/* pbs_idle: the job's processes on this node but the monitor's own and its ancestors were seen and are gone,
 * and none of the ancestors runs. */
static int pbs_idle(js_jobend_t *e)
{
    const char *var = e->kind == JS_BATCH_PBS ? "PBS_JOBID" : "OAR_JOB_ID";
    int32_t anc[64];
    size_t nanc = 0;
    bool running = false;
    for (int32_t p = e->self; p > 1 && nanc < 64;) {
        js_pid_stat_t ps;
        if (read_stat(e, p, &ps) < 0)
            break;
        anc[nanc++] = p;
        if (p != e->self && ps.state == 'R') {
            char val[64];
            running |= env_value(e, p, var, val, sizeof(val)) == 0 && !strcmp(val, e->job);
        }
        p = ps.ppid;
    }
    int32_t mine[MAX_TREE];
    size_t nmine = 1;
    mine[0] = e->self;
    for (size_t i = 0; i < nmine && nmine < MAX_TREE; i++)
        nmine += children(e, mine[i], mine + nmine, MAX_TREE - nmine);
    js_pid_iter_t it;
    if (pid_iter_open(&it, e->root->proc, ".") < 0)
        return 0;
    e->stamp++;
    size_t work = 0;
    int rc = 0;
    int32_t pid;
    while ((pid = pid_iter_next(&it)) > 0) {
        js_pid_stat_t ps;
        if (read_stat(e, pid, &ps) < 0 || ps.state == 'Z' || ps.state == 'X')
            continue;
        int fresh = 0;
        pent_t *x = pidmap_put(&e->procs, pid, &fresh);
        if (!x) {
            rc = -ENOMEM;
            break;
        }
        if (fresh || x->start != ps.starttime)
            *x = (pent_t){.start = ps.starttime};
        x->seen = e->stamp;
        if (x->job == 0) { /* a process is judged once; its environment is read until it can be */
            char val[64];
            int r = env_value(e, pid, var, val, sizeof(val));
            x->job = r == 0 ? (strcmp(val, e->job) == 0 ? 1 : -1) : r == -ENOENT ? -1 : 0;
        }
        if (x->job == 1 && !in_list(anc, nanc, pid) && !in_list(mine, nmine, pid))
            work++;
    }
    pid_iter_close(&it);
    size_t nstale = 0; /* forget the processes gone (collected first: a deletion moves entries) */
    int32_t *stale = rc == 0 && e->procs.count ? malloc(e->procs.count * sizeof(*stale)) : NULL;
    for (size_t i = 0; stale && i < e->procs.cap; i++) {
        void *v;
        int32_t known = pidmap_at(&e->procs, i, &v);
        if (known && ((pent_t *)v)->seen != e->stamp)
            stale[nstale++] = known;
    }
    for (size_t i = 0; i < nstale; i++)
        pidmap_del(&e->procs, stale[i]);
    free(stale);
    if (rc < 0)
        return rc;
    if (work)
        e->seen_work = true;
    return e->seen_work && !work && !running;
}

int jobend_check(js_jobend_t *e, int64_t now)
{
    int idle = 0;
    if (e->kind == JS_BATCH_SLURM) {
        if (e->batch < 0)
            find_batch(e, now);
        idle = e->batch == 1 && slurm_idle(e);
    } else if (e->kind == JS_BATCH_PBS || e->kind == JS_BATCH_OAR) {
        if (now < e->next_pbs_ns)
            return 0;
        e->next_pbs_ns = now + MIN_GAP_NS;
        idle = pbs_idle(e);
        if (idle < 0)
            return idle;
    }
    if (!idle) {
        e->hits = 0;
        return 0;
    }
    if (e->hits && now - e->last_hit_ns < MIN_GAP_NS)
        return 0;
    e->last_hit_ns = now;
    return ++e->hits >= 2;
}
