/* SPDX-License-Identifier: MIT
 *
 * cgroup v1/v2/hybrid discovery, resolution, creation, attachment, listing and removal (see cgroupfs.h).
 * Everything is relative to directory descriptors: a hierarchy's mount point is opened once through the
 * fsroot, and a cgroup is a path relative to it.
 */
#include "sys/cgroupfs.h"

#include "sys/sysio.h"
#include "core/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CG_PATH_MAX 4096
#define CG_NAME_TRIES 64 /* names tried when jobscope-<pid>-<n> exists (a dead run with a reused PID) */
#define CG_RMDIR_TRIES 6 /* rmdir attempts while a cgroup is busy with no process listed in it */
#define CG_RMDIR_WAIT_NS 10000000
#define CG_WALK_DEPTH 32 /* cgroupfs_pids recursion limit */

/* Controllers that make a v1 hierarchy worth a run cgroup of its own. */
#define CG_RUN_CTRLS                                                                                         \
    ((1u << JS_CG_CPU) | (1u << JS_CG_CPUACCT) | (1u << JS_CG_MEMORY) | (1u << JS_CG_IO) | (1u << JS_CG_PIDS))

static const char *const ctrl_names[JS_CG_CTRL_MAX] = {
    [JS_CG_CPU] = "cpu", [JS_CG_CPUACCT] = "cpuacct", [JS_CG_CPUSET] = "cpuset", [JS_CG_MEMORY] = "memory",
    [JS_CG_IO] = "io",   [JS_CG_PIDS] = "pids",       [JS_CG_PSI] = "psi",
};

const char *cgroupfs_ctrl_name(js_cg_ctrl_t c)
{
    return c < JS_CG_CTRL_MAX ? ctrl_names[c] : "?";
}

/* ---- parsing ---------------------------------------------------------------------------------------- */

/* tok_is: whether the `len` bytes at `s` are exactly `word`. */
static bool tok_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* ctrl_bit: the bit of a controller name (v1 names; v2's "io" too), 0 for one jobscope does not read. */
static unsigned ctrl_bit(const char *s, size_t len, int version)
{
    if (tok_is(s, len, "cpu"))
        return 1u << JS_CG_CPU;
    if (tok_is(s, len, "cpuacct"))
        return 1u << JS_CG_CPUACCT;
    if (tok_is(s, len, "cpuset"))
        return 1u << JS_CG_CPUSET;
    if (tok_is(s, len, "memory"))
        return 1u << JS_CG_MEMORY;
    if (tok_is(s, len, version == 2 ? "io" : "blkio"))
        return 1u << JS_CG_IO;
    if (tok_is(s, len, "pids"))
        return 1u << JS_CG_PIDS;
    return 0;
}

/* ctrls_of: the bits of a list of names separated by any of `seps`. */
static unsigned ctrls_of(const char *list, size_t len, const char *seps, int version)
{
    unsigned mask = 0;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && !strchr(seps, list[j]))
            j++;
        if (j > i)
            mask |= ctrl_bit(list + i, j - i, version);
        i = j + 1;
    }
    return mask;
}

unsigned cgroupfs_v1_ctrls(const char *list, size_t len)
{
    return ctrls_of(list, len, ",", 1);
}

/* field: the next blank-separated field of a mountinfo line at *p (advanced past it); its length in *len. */
static const char *field(const char **p, size_t *len)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    const char *e = s;
    while (*e && *e != ' ' && *e != '\n')
        e++;
    *len = (size_t)(e - s);
    *p = e;
    return *len ? s : NULL;
}

/* unescape: copy a mountinfo path field, decoding the kernel's \ooo octal escapes. -ENAMETOOLONG if too long.
 */
static int unescape(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
            s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        }
        if (o + 1 >= cap)
            return -ENAMETOOLONG;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

int cgroupfs_parse_mountinfo_line(const char *line, int *ret_version, unsigned *ret_ctrls, char *root,
                                  char *mount, size_t cap)
{
    const char *p = line, *f[5];
    size_t len[5];
    for (int i = 0; i < 5; i++) /* id, parent, major:minor, root, mount point */
        if (!(f[i] = field(&p, &len[i])))
            return -EINVAL;
    /* mount options, then optional fields up to the lone "-" */
    const char *s;
    size_t n;
    do
        if (!(s = field(&p, &n)))
            return -EINVAL;
    while (!(n == 1 && s[0] == '-'));
    const char *fstype = field(&p, &n);
    if (!fstype)
        return -EINVAL;
    int version;
    if (tok_is(fstype, n, "cgroup"))
        version = 1;
    else if (tok_is(fstype, n, "cgroup2"))
        version = 2;
    else
        return -ENOENT;
    size_t srclen, optlen;
    if (!field(&p, &srclen))
        return -EINVAL;
    const char *opts = field(&p, &optlen);
    int r = unescape(f[3], len[3], root, cap);
    if (r == 0)
        r = unescape(f[4], len[4], mount, cap);
    if (r < 0)
        return r;
    *ret_version = version;
    *ret_ctrls = version == 1 && opts ? cgroupfs_v1_ctrls(opts, optlen) : 0;
    return 0;
}

/* ---- mounts ------------------------------------------------------------------------------------------ */

void cgroupfs_mounts_close(js_cg_mounts_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        if (m->h[i].fd >= 0)
            close(m->h[i].fd);
        free(m->h[i].mount);
        free(m->h[i].mnt_root);
    }
    memset(m, 0, sizeof(*m));
    m->unified = -1;
    for (int c = 0; c < JS_CG_CTRL_MAX; c++)
        m->by_ctrl[c] = -1;
}

int cgroupfs_mounts(const js_fsroot_t *r, js_cg_mounts_t *ret)
{
    js_cg_mounts_t m;
    memset(&m, 0, sizeof(m));
    cgroupfs_mounts_close(&m); /* sets the -1s */
    js_buf_t b = {0};
    int rc = fs_read(r->proc, "self/mountinfo", &b);
    if (rc < 0) {
        buf_free(&b);
        return rc;
    }
    char *root = malloc(CG_PATH_MAX), *mnt = malloc(CG_PATH_MAX);
    if (!root || !mnt) {
        rc = -ENOMEM;
        goto out;
    }
    for (const char *line = b.p; line && *line && m.n < JS_CG_HIER_MAX;) {
        const char *start = line, *nl = strchr(line, '\n');
        int version;
        unsigned ctrls;
        char one[CG_PATH_MAX * 2];
        size_t len = nl ? (size_t)(nl - start) : strlen(start);
        line = nl ? nl + 1 : NULL;
        if (len >= sizeof(one))
            continue;
        memcpy(one, start, len);
        one[len] = '\0';
        if (cgroupfs_parse_mountinfo_line(one, &version, &ctrls, root, mnt, CG_PATH_MAX) < 0)
            continue;
        if (version == 1 && !ctrls)
            continue; /* name=systemd, freezer, devices, ... */
        bool dup = false;
        for (size_t i = 0; i < m.n; i++)
            dup |= m.h[i].version == version && (version == 2 || m.h[i].ctrls == ctrls);
        if (dup)
            continue;
        int fd = fsroot_open_abs(r, mnt, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
            continue; /* not reachable from here (outside the fixture, or gone) */
        js_cg_hier_t *h = &m.h[m.n];
        h->version = version;
        h->fd = fd;
        h->mount = strdup(mnt);
        h->mnt_root = strdup(root);
        m.n++;
        if (!h->mount || !h->mnt_root) {
            rc = -ENOMEM;
            goto out;
        }
        if (version == 2) {
            char list[512];
            ssize_t k = fs_read_small(fd, "cgroup.controllers", list, sizeof(list));
            h->ctrls =
                (k > 0 ? ctrls_of(list, (size_t)k, " \n", 2) : 0) | (1u << JS_CG_CPUACCT) | (1u << JS_CG_PSI);
            m.unified = (int)(m.n - 1);
        } else {
            h->ctrls = ctrls;
        }
    }
    /* each controller from its v1 mount, else from the unified hierarchy */
    for (int c = 0; c < JS_CG_CTRL_MAX; c++) {
        for (size_t i = 0; i < m.n && m.by_ctrl[c] < 0; i++)
            if (m.h[i].version == 1 && (m.h[i].ctrls & (1u << c)))
                m.by_ctrl[c] = (int)i;
        if (m.by_ctrl[c] < 0 && m.unified >= 0 && (m.h[m.unified].ctrls & (1u << c)))
            m.by_ctrl[c] = m.unified;
    }
    rc = m.n ? 0 : -ENOENT;
out:
    free(root);
    free(mnt);
    buf_free(&b);
    if (rc < 0)
        cgroupfs_mounts_close(&m);
    else
        *ret = m;
    return rc;
}

/* ---- the cgroup object ------------------------------------------------------------------------------- */

static js_cgroup_t *cg_new(void)
{
    js_cgroup_t *cg = calloc(1, sizeof(*cg));
    if (!cg)
        return NULL;
    cgroupfs_mounts_close(&cg->m);
    for (int i = 0; i < JS_CG_HIER_MAX; i++)
        cg->dir[i] = -1;
    return cg;
}

/* cg_clear: forget hierarchy h's cgroup. */
static void cg_clear(js_cgroup_t *cg, int h)
{
    free(cg->path[h]);
    free(cg->rel[h]);
    cg->path[h] = cg->rel[h] = NULL;
    if (cg->dir[h] >= 0)
        close(cg->dir[h]);
    cg->dir[h] = -1;
    cg->created[h] = false;
}

void cgroupfs_free(js_cgroup_t *cg)
{
    if (!cg)
        return;
    for (int i = 0; i < JS_CG_HIER_MAX; i++)
        cg_clear(cg, i);
    cgroupfs_mounts_close(&cg->m);
    free(cg);
}

/* rel_of: the part of cgroup path `path` (from the hierarchy root, "/..." ) below the mount's root, as a path
 * relative to the mount point ("." for the mount's root), or NULL when the mount does not show it. */
static const char *rel_of(const char *mnt_root, const char *path)
{
    size_t n = strlen(mnt_root);
    while (n > 0 && mnt_root[n - 1] == '/')
        n--;
    if (strncmp(path, mnt_root, n) != 0 || (path[n] != '\0' && path[n] != '/'))
        return NULL;
    path += n;
    while (*path == '/')
        path++;
    return *path ? path : ".";
}

/* has_dotdot: whether a path has a ".." component (a process in another cgroup namespace shows one). */
static bool has_dotdot(const char *p)
{
    for (const char *s = p; (s = strstr(s, "..")); s += 2)
        if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
            return true;
    return false;
}

/* cg_set: make `path` (from the hierarchy root) the cgroup of hierarchy h and open its directory.
 * Returns 0, -ENOENT (not visible through this mount, or no such directory), -ENOMEM. */
static int cg_set(js_cgroup_t *cg, int h, const char *path)
{
    cg_clear(cg, h);
    if (path[0] != '/' || has_dotdot(path))
        return -ENOENT;
    const char *rel = rel_of(cg->m.h[h].mnt_root, path);
    if (!rel)
        return -ENOENT;
    int fd = fs_open_dir(cg->m.h[h].fd, rel, false);
    if (fd < 0)
        return fd;
    cg->dir[h] = fd;
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    cg->path[h] = strndup(path, n);
    cg->rel[h] = strdup(rel);
    size_t k = strlen(cg->rel[h] ? cg->rel[h] : "");
    while (k > 1 && cg->rel[h][k - 1] == '/')
        cg->rel[h][--k] = '\0';
    if (!cg->path[h] || !cg->rel[h]) {
        cg_clear(cg, h);
        return -ENOMEM;
    }
    return 0;
}

static bool cg_any(const js_cgroup_t *cg)
{
    for (size_t i = 0; i < cg->m.n; i++)
        if (cg->path[i])
            return true;
    return false;
}

/* cg_from_pid: set every hierarchy's cgroup from the text of <procfs>/PID/cgroup. */
static int cg_from_text(js_cgroup_t *cg, const char *text)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        const char *end = nl ? nl : line + strlen(line);
        const char *c1 = memchr(line, ':', (size_t)(end - line));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
        const char *next = nl ? nl + 1 : NULL;
        if (c2) {
            int h = -1;
            if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
                h = cg->m.unified;
            } else {
                unsigned mask = cgroupfs_v1_ctrls(c1 + 1, (size_t)(c2 - c1 - 1));
                for (size_t i = 0; mask && i < cg->m.n; i++)
                    if (cg->m.h[i].version == 1 && cg->m.h[i].ctrls == mask)
                        h = (int)i;
            }
            size_t plen = (size_t)(end - c2 - 1);
            if (h >= 0 && plen > 0 && plen < CG_PATH_MAX) {
                char path[CG_PATH_MAX];
                memcpy(path, c2 + 1, plen);
                path[plen] = '\0';
                if (cg_set(cg, h, path) == -ENOMEM)
                    return -ENOMEM;
            }
        }
        line = next;
    }
    return 0;
}

/* cg_open_pid: a new cgroup object for `pid` (0: self). */
static int cg_open_pid(const js_fsroot_t *r, pid_t pid, js_cgroup_t **ret, char *why, size_t whylen)
{
    js_cgroup_t *cg = cg_new();
    if (!cg)
        return -ENOMEM;
    int rc = cgroupfs_mounts(r, &cg->m);
    if (rc < 0) {
        why_set(why, whylen, rc == -ENOENT ? "no cgroup hierarchy is mounted" : "cannot read mountinfo: %s",
                strerror(-rc));
        goto fail;
    }
    char path[32];
    if (pid > 0)
        snprintf(path, sizeof(path), "%d/cgroup", (int)pid);
    else
        snprintf(path, sizeof(path), "self/cgroup");
    js_buf_t b = {0};
    rc = fs_read(r->proc, path, &b);
    if (rc == 0)
        rc = cg_from_text(cg, b.p);
    buf_free(&b);
    if (rc < 0) {
        why_set(why, whylen, "cannot read %s: %s", path, strerror(-rc));
        if (rc == -ENOENT)
            rc = -ESRCH;
        goto fail;
    }
    if (!cg_any(cg)) {
        why_set(why, whylen, "none of the cgroups in %s is visible through the mounted hierarchies", path);
        rc = -ENOENT;
        goto fail;
    }
    *ret = cg;
    return 0;
fail:
    cgroupfs_free(cg);
    return rc;
}

int cgroupfs_open_pid(const js_fsroot_t *r, pid_t pid, js_cgroup_t **ret, char *why, size_t whylen)
{
    return cg_open_pid(r, pid, ret, why, whylen);
}

int cgroupfs_open_path(const js_fsroot_t *r, const char *path, js_cgroup_t **ret, char *why, size_t whylen)
{
    if (!path || path[0] != '/' || has_dotdot(path)) {
        why_set(why, whylen,
                "'%s': give an absolute path under a cgroup mount, or one as /proc/PID/cgroup shows it",
                path ? path : "");
        return -EINVAL;
    }
    if (strlen(path) >= CG_PATH_MAX) {
        why_set(why, whylen, "cgroup path too long");
        return -EINVAL;
    }
    js_cgroup_t *cg = cg_new();
    if (!cg)
        return -ENOMEM;
    int rc = cgroupfs_mounts(r, &cg->m);
    if (rc < 0) {
        why_set(why, whylen, rc == -ENOENT ? "no cgroup hierarchy is mounted" : "cannot read mountinfo: %s",
                strerror(-rc));
        goto fail;
    }
    /* under a mount point? the longest match wins (/sys/fs/cgroup/unified over a v2 /sys/fs/cgroup) */
    int h0 = -1;
    size_t best = 0;
    for (size_t i = 0; i < cg->m.n; i++) {
        const char *mp = cg->m.h[i].mount;
        size_t n = strlen(mp);
        while (n > 0 && mp[n - 1] == '/')
            n--;
        if (strncmp(path, mp, n) == 0 && (path[n] == '\0' || path[n] == '/') && n >= best) {
            best = n;
            h0 = (int)i;
        }
    }
    char cgpath[CG_PATH_MAX];
    if (h0 >= 0) {
        const char *rest = path + best;
        while (*rest == '/')
            rest++;
        const char *mr = cg->m.h[h0].mnt_root;
        int n = snprintf(cgpath, sizeof(cgpath), "%s%s%s", mr, mr[strlen(mr) - 1] == '/' || !*rest ? "" : "/",
                         rest);
        if (n < 0 || (size_t)n >= sizeof(cgpath)) {
            rc = -EINVAL;
            why_set(why, whylen, "cgroup path too long");
            goto fail;
        }
        if ((rc = cg_set(cg, h0, cgpath)) < 0) {
            why_set(why, whylen, "%s: %s", path, strerror(-rc));
            goto fail;
        }
    } else {
        snprintf(cgpath, sizeof(cgpath), "%s", path);
    }
    for (size_t i = 0; i < cg->m.n; i++)
        if ((int)i != h0 && cg_set(cg, (int)i, cgpath) == -ENOMEM) {
            rc = -ENOMEM;
            goto fail;
        }
    if (!cg_any(cg)) {
        why_set(why, whylen, "no cgroup %s in any mounted hierarchy", path);
        rc = -ENOENT;
        goto fail;
    }
    *ret = cg;
    return 0;
fail:
    cgroupfs_free(cg);
    return rc;
}

/* ---- accessors --------------------------------------------------------------------------------------- */

int cgroupfs_hier(const js_cgroup_t *cg, js_cg_ctrl_t c)
{
    if (!cg || c >= JS_CG_CTRL_MAX)
        return -1;
    int h = cg->m.by_ctrl[c];
    if (h >= 0 && cg->path[h])
        return h;
    /* a hybrid host: a cgroup2 directory with no v1 counterpart (a user named it) still has its own cpu.stat
     * usage and pressure, which every v2 cgroup has, and any controller its hierarchy carries */
    int u = cg->m.unified;
    return u >= 0 && u != h && cg->path[u] && (cg->m.h[u].ctrls & (1u << c)) ? u : -1;
}

int cgroupfs_dir(const js_cgroup_t *cg, js_cg_ctrl_t c, int *ret_version)
{
    int h = cgroupfs_hier(cg, c);
    if (ret_version)
        *ret_version = h >= 0 ? cg->m.h[h].version : 0;
    return h >= 0 ? cg->dir[h] : -1;
}

const char *cgroupfs_version_name(const js_cgroup_t *cg)
{
    bool v1 = false, v2 = false;
    for (size_t i = 0; cg && i < cg->m.n; i++)
        if (cg->path[i]) {
            v1 |= cg->m.h[i].version == 1;
            v2 |= cg->m.h[i].version == 2;
        }
    return v1 && v2 ? "hybrid" : v1 ? "v1" : v2 ? "v2" : "none";
}

char *cgroupfs_describe(const js_cgroup_t *cg, int h, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    buf[0] = '\0';
    if (!cg || h < 0 || (size_t)h >= cg->m.n || !cg->rel[h])
        return buf;
    const char *mp = cg->m.h[h].mount, *rel = cg->rel[h];
    bool slash = mp[0] && mp[strlen(mp) - 1] == '/';
    int n = strcmp(rel, ".") == 0 ? snprintf(buf, cap, "%s", mp)
                                  : snprintf(buf, cap, "%s%s%s", mp, slash ? "" : "/", rel);
    if (n < 0)
        buf[0] = '\0';
    return buf;
}

char *cgroupfs_main_path(const js_cgroup_t *cg, char *buf, size_t cap)
{
    int h = cgroupfs_hier(cg, JS_CG_MEMORY);
    for (size_t i = 0; cg && h < 0 && i < cg->m.n; i++)
        if (cg->path[i])
            h = (int)i;
    return cgroupfs_describe(cg, h, buf, cap);
}

ssize_t cgroupfs_read_up(const js_cgroup_t *cg, js_cg_ctrl_t c, unsigned up, const char *file, char *buf,
                         size_t cap)
{
    int h = cgroupfs_hier(cg, c);
    if (h < 0)
        return -ENOENT;
    char path[CG_PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s", cg->rel[h]);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    size_t len = (size_t)n;
    for (unsigned k = 0; k < up; k++) {
        if (strcmp(path, ".") == 0)
            return -ERANGE;
        char *slash = strrchr(path, '/');
        if (slash) {
            *slash = '\0';
            len = (size_t)(slash - path);
        } else {
            snprintf(path, sizeof(path), ".");
            len = 1;
        }
    }
    n = snprintf(path + len, sizeof(path) - len, "/%s", file);
    if (n < 0 || (size_t)n >= sizeof(path) - len)
        return -ENAMETOOLONG;
    return fs_read_small(cg->m.h[h].fd, path, buf, cap);
}

/* ---- pids -------------------------------------------------------------------------------------------- */

void cgroupfs_pids_free(js_cg_pids_t *p)
{
    if (!p)
        return;
    free(p->pid);
    buf_free(&p->buf);
    p->pid = NULL;
    p->n = p->cap = 0;
}

static int pids_push(js_cg_pids_t *p, pid_t pid)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        pid_t *np = realloc(p->pid, cap * sizeof(*np));
        if (!np)
            return -ENOMEM;
        p->pid = np;
        p->cap = cap;
    }
    p->pid[p->n++] = pid;
    return 0;
}

/* pids_read_dir: append the PIDs listed in cgroup.procs (or tasks) of directory `dir`, and with `depth` > 0
 * those of every child cgroup. */
static int pids_read_dir(int dir, int depth, js_cg_pids_t *out)
{
    int rc = fs_read(dir, "cgroup.procs", &out->buf);
    if (rc == -ENOENT)
        rc = fs_read(dir, "tasks", &out->buf);
    if (rc < 0)
        return rc;
    for (const char *p = out->buf.p; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) {
            p++;
            continue;
        }
        if (v > 0 && v <= INT32_MAX && (rc = pids_push(out, (pid_t)v)) < 0)
            return rc;
        p = end;
    }
    if (depth <= 0)
        return 0;
    DIR *d;
    if (fs_opendir(dir, ".", &d) < 0)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
            continue;
        int sub = fs_open_dir(dir, e->d_name, false);
        if (sub < 0)
            continue; /* a file (DT_UNKNOWN), or a cgroup removed meanwhile */
        rc = pids_read_dir(sub, depth - 1, out);
        close(sub);
        if (rc == -ENOMEM)
            break;
        rc = 0; /* a child cgroup removed while we read it is no error */
    }
    closedir(d);
    return rc;
}

static int pid_cmp(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

static void pids_sort_unique(js_cg_pids_t *p)
{
    if (p->n < 2)
        return;
    qsort(p->pid, p->n, sizeof(*p->pid), pid_cmp);
    size_t k = 1;
    for (size_t i = 1; i < p->n; i++)
        if (p->pid[i] != p->pid[k - 1])
            p->pid[k++] = p->pid[i];
    p->n = k;
}

/* pids_hier: the hierarchy cgroupfs_pids reads: v2 first, else the first v1 one the cgroup is in. */
static int pids_hier(const js_cgroup_t *cg)
{
    if (cg->m.unified >= 0 && cg->path[cg->m.unified])
        return cg->m.unified;
    for (size_t i = 0; i < cg->m.n; i++)
        if (cg->path[i] && cg->dir[i] >= 0)
            return (int)i;
    return -1;
}

int cgroupfs_pids(const js_cgroup_t *cg, bool recursive, js_cg_pids_t *out)
{
    out->n = 0;
    int h = cg ? pids_hier(cg) : -1;
    if (h < 0 || cg->dir[h] < 0)
        return -ENOENT;
    int rc = pids_read_dir(cg->dir[h], recursive ? CG_WALK_DEPTH : 0, out);
    pids_sort_unique(out);
    return rc;
}

/* ---- creation, attachment, removal ------------------------------------------------------------------- */

/* has_word: whether a blank-separated list holds `w`. */
static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *s = list; (s = strstr(s, w)); s += n)
        if ((s == list || s[-1] == ' ' || s[-1] == '\n') && (s[n] == '\0' || s[n] == ' ' || s[n] == '\n'))
            return true;
    return false;
}

/* write_str: write `s` to `file` in directory `dir`. Returns 0 or -errno. */
static int write_str(int dir, const char *file, const char *s)
{
    int fd = sys_openat(dir, file, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return -errno;
    size_t n = strlen(s);
    ssize_t w;
    do
        w = sys_write(fd, s, n);
    while (w < 0 && errno == EINTR);
    int rc = w < 0 ? -errno : (size_t)w == n ? 0 : -EIO;
    sys_close(fd);
    return rc;
}

int cgroupfs_open_peak_reset(int dir, const char *file)
{
    int fd = sys_openat(dir, file, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        sys_close(fd);
        return -EINVAL;
    }
    ssize_t w;
    do
        w = sys_write(fd, "reset\n", 6);
    while (w < 0 && errno == EINTR);
    if (w != 6) {
        int r = w < 0 ? -errno : -EIO;
        sys_close(fd);
        return r;
    }
    return fd;
}

/* join: `a` "/" `b` into buf, "." parts dropped. */
static int join(char *buf, size_t cap, const char *a, const char *b)
{
    int n;
    if (strcmp(a, ".") == 0)
        n = snprintf(buf, cap, "%s", b);
    else if (strcmp(b, ".") == 0)
        n = snprintf(buf, cap, "%s", a);
    else
        n = snprintf(buf, cap, "%s/%s", a, b);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* parent_rel: the parent of relative path `rel` into buf ("." for a top-level one); -ERANGE for ".". */
static int parent_rel(const char *rel, char *buf, size_t cap)
{
    if (strcmp(rel, ".") == 0)
        return -ERANGE;
    const char *slash = strrchr(rel, '/');
    if (!slash)
        return join(buf, cap, ".", ".");
    size_t n = (size_t)(slash - rel);
    if (n + 1 > cap)
        return -ENAMETOOLONG;
    memcpy(buf, rel, n);
    buf[n] = '\0';
    return 0;
}

/* v2_parent: where in the unified hierarchy the run cgroup goes (relative to the mount), into buf (see
 * cgroupfs_create_run for the rule). `own` is the monitor's cgroup relative to the mount. */
static void v2_parent(int mnt, const char *own, char *buf, size_t cap)
{
    char file[CG_PATH_MAX], list[512], avail[512];
    snprintf(buf, cap, "%s", own);
    if (strcmp(own, ".") == 0) {
        /* the root: hand down every controller jobscope reads that the kernel offers here */
        ssize_t a = fs_read_small(mnt, "cgroup.controllers", avail, sizeof(avail));
        ssize_t s = fs_read_small(mnt, "cgroup.subtree_control", list, sizeof(list));
        static const char *const want[] = {"cpu", "io", "memory", "pids"};
        for (size_t i = 0; a > 0 && s >= 0 && i < sizeof(want) / sizeof(want[0]); i++)
            if (has_word(avail, want[i]) && !has_word(list, want[i])) {
                char plus[16];
                snprintf(plus, sizeof(plus), "+%s", want[i]);
                (void)write_str(mnt, "cgroup.subtree_control", plus); /* best effort */
            }
        return;
    }
    if (join(file, sizeof(file), own, "cgroup.subtree_control") == 0 &&
        fs_read_small(mnt, file, list, sizeof(list)) > 0 && has_word(list, "memory"))
        return;
    uid_t me = geteuid();
    char parent[CG_PATH_MAX];
    struct stat st;
    if (me == 0 || parent_rel(own, parent, sizeof(parent)) < 0 || fstatat(mnt, parent, &st, 0) < 0 ||
        st.st_uid != me)
        return;
    if (join(file, sizeof(file), parent, "cgroup.subtree_control") == 0 &&
        fs_read_small(mnt, file, list, sizeof(list)) > 0 && has_word(list, "memory"))
        snprintf(buf, cap, "%s", parent);
}

/* copy_file: copy a small file's content from directory `from` to `to` (v1 cpuset.cpus and cpuset.mems). */
static void copy_file(int from, int to, const char *file)
{
    char v[1024];
    if (fs_read_small(from, file, v, sizeof(v)) > 0)
        (void)write_str(to, file, v);
}

static unsigned run_counter; /* runs made by this process (cgroupfs_create_run) */

/* sweep_stale: remove the empty run cgroups that monitors no longer alive left in directory `rel` of mount
 * `mnt` (a jobscope killed by SIGKILL cannot remove its own). Only names jobscope-<pid>-<n> whose <pid> has
 * no <procfs> entry; rmdir refuses a cgroup that still has a process or a child cgroup, so nothing in use
 * goes. */
static void sweep_stale(const js_fsroot_t *r, int mnt, const char *rel, pid_t self)
{
    DIR *d;
    if (fs_opendir(mnt, rel, &d) < 0)
        return;
    int fd = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid, len = 0;
        unsigned n;
        char procdir[24];
        if (sscanf(e->d_name, "jobscope-%d-%u%n", &pid, &n, &len) != 2 || e->d_name[len] != '\0' ||
            pid <= 0 || pid == (int)self)
            continue;
        snprintf(procdir, sizeof(procdir), "%d", pid);
        if (faccessat(r->proc, procdir, F_OK, 0) < 0 && errno == ENOENT)
            (void)unlinkat(fd, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

int cgroupfs_create_run(const js_fsroot_t *r, pid_t monitor_pid, js_cgroup_t **ret, char *why, size_t whylen)
{
    js_cgroup_t *cg = NULL;
    int rc = cg_open_pid(r, monitor_pid, &cg, why, whylen);
    if (rc < 0)
        return rc;
    char(*parent)[CG_PATH_MAX] = calloc(JS_CG_HIER_MAX, sizeof(*parent));
    if (!parent) {
        cgroupfs_free(cg);
        return -ENOMEM;
    }
    bool make[JS_CG_HIER_MAX] = {false};
    for (size_t h = 0; h < cg->m.n; h++) {
        if (!cg->path[h])
            continue;
        const js_cg_hier_t *hi = &cg->m.h[h];
        if (hi->version == 1 && !(hi->ctrls & CG_RUN_CTRLS))
            continue; /* cpuset alone: keep the monitor's, read as the allocation */
        if (hi->version == 2)
            v2_parent(hi->fd, cg->rel[h], parent[h], sizeof(parent[h]));
        else
            snprintf(parent[h], sizeof(parent[h]), "%s", cg->rel[h]);
        make[h] = true;
    }
    for (size_t h = 0; h < cg->m.n; h++)
        if (make[h])
            sweep_stale(r, cg->m.h[h].fd, parent[h], monitor_pid);
    /* one name for every hierarchy, free in all of them */
    char name[64], rel[CG_PATH_MAX];
    for (int tries = 0; tries < CG_NAME_TRIES; tries++) {
        snprintf(name, sizeof(name), "jobscope-%d-%u", (int)monitor_pid, ++run_counter);
        bool taken = false;
        for (size_t h = 0; h < cg->m.n && !taken; h++)
            taken = make[h] && join(rel, sizeof(rel), parent[h], name) == 0 &&
                    faccessat(cg->m.h[h].fd, rel, F_OK, 0) == 0;
        if (!taken)
            break;
    }
    int first_err = 0;
    char first_why[CG_PATH_MAX + 64] = "";
    size_t made = 0;
    for (size_t h = 0; h < cg->m.n; h++) {
        if (!make[h])
            continue;
        const js_cg_hier_t *hi = &cg->m.h[h];
        int e = join(rel, sizeof(rel), parent[h], name);
        if (e == 0 && mkdirat(hi->fd, rel, 0755) < 0)
            e = -errno;
        char cgpath[CG_PATH_MAX];
        if (e == 0) {
            /* the new directory's path from the hierarchy root: the mount's root joined with rel */
            const char *mr = hi->mnt_root;
            int n = snprintf(cgpath, sizeof(cgpath), "%s%s%s", mr, mr[strlen(mr) - 1] == '/' ? "" : "/", rel);
            e = n < 0 || (size_t)n >= sizeof(cgpath) ? -ENAMETOOLONG : cg_set(cg, (int)h, cgpath);
            if (e < 0)
                (void)unlinkat(hi->fd, rel, AT_REMOVEDIR);
        }
        if (e < 0) {
            if (!first_err) {
                first_err = e;
                int n =
                    snprintf(first_why, sizeof(first_why), "mkdir %s/%s: %s", hi->mount, rel, strerror(-e));
                if (n < 0)
                    first_why[0] = '\0';
            }
            cg_clear(cg, (int)h);
            if (e == -ENOMEM)
                break;
            continue;
        }
        cg->created[h] = true;
        made++;
        if (hi->version == 1 && (hi->ctrls & (1u << JS_CG_CPUSET))) {
            /* a v1 cpuset starts empty and refuses tasks: give it the parent's CPUs and memory nodes */
            int pfd = fs_open_dir(cg->dir[h], "..", false);
            if (pfd >= 0) {
                copy_file(pfd, cg->dir[h], "cpuset.cpus");
                copy_file(pfd, cg->dir[h], "cpuset.mems");
                close(pfd);
            }
        }
    }
    free(parent);
    if (!made) {
        why_set(why, whylen, "%s", first_why[0] ? first_why : "no cgroup hierarchy to create a cgroup in");
        rc = first_err ? first_err : -ENOENT;
        cgroupfs_free(cg);
        return rc;
    }
    *ret = cg;
    return 0;
}

int cgroupfs_join_self(const js_cgroup_t *cg, unsigned skip, unsigned *ret_joined)
{
    unsigned joined = 0;
    int rc = 0;
    for (size_t h = 0; cg && h < cg->m.n; h++) {
        if (!cg->created[h] || cg->dir[h] < 0 || (skip & (1u << h)))
            continue;
        /* v1: `tasks` moves the writing thread alone, without the global threadgroup lock; the caller has
         * one thread. A hierarchy without `tasks` (none known) falls back to cgroup.procs. */
        int e = cg->m.h[h].version == 1 ? write_str(cg->dir[h], "tasks", "0\n") : -ENOENT;
        if (e == -ENOENT)
            e = write_str(cg->dir[h], "cgroup.procs", "0\n");
        if (e == 0)
            joined |= 1u << h;
        else if (!rc)
            rc = e;
    }
    if (ret_joined)
        *ret_joined = joined;
    return rc;
}

int cgroupfs_clone_dir(const js_cgroup_t *cg, unsigned *ret_bit)
{
    for (size_t h = 0; cg && h < cg->m.n; h++)
        if (cg->created[h] && cg->dir[h] >= 0 && cg->m.h[h].version == 2) {
            if (ret_bit)
                *ret_bit = 1u << h;
            return cg->dir[h];
        }
    if (ret_bit)
        *ret_bit = 0;
    return -1;
}

/* dir_has_pids: whether hierarchy h's cgroup (or one below it) lists a process. */
static bool dir_has_pids(const js_cgroup_t *cg, int h, js_cg_pids_t *tmp)
{
    tmp->n = 0;
    return cg->dir[h] >= 0 && pids_read_dir(cg->dir[h], CG_WALK_DEPTH, tmp) == 0 && tmp->n > 0;
}

static void sleep_ns(long ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ns};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* rmdir_children: remove the (empty) cgroups a job made below directory `dir`, deepest first. */
static void rmdir_children(int dir, int depth)
{
    if (depth <= 0)
        return;
    DIR *d;
    if (fs_opendir(dir, ".", &d) < 0)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
            continue;
        int sub = fs_open_dir(dir, e->d_name, false);
        if (sub < 0)
            continue;
        rmdir_children(sub, depth - 1);
        close(sub);
        (void)unlinkat(dir, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

int cgroupfs_evict(const js_cgroup_t *cg)
{
    int rc = 0;
    js_cg_pids_t p = {0};
    for (size_t h = 0; cg && h < cg->m.n; h++) {
        if (!cg->created[h] || cg->dir[h] < 0)
            continue;
        int parent = fs_open_dir(cg->dir[h], "..", false);
        if (parent < 0) {
            rc = rc ? rc : parent;
            continue;
        }
        p.n = 0;
        int e = pids_read_dir(cg->dir[h], CG_WALK_DEPTH, &p);
        pids_sort_unique(&p);
        for (size_t i = 0; e != -ENOMEM && i < p.n; i++) {
            char s[24];
            snprintf(s, sizeof(s), "%d\n", (int)p.pid[i]);
            int w = write_str(parent, "cgroup.procs", s);
            if (w < 0 && w != -ESRCH && !rc)
                rc = w;
        }
        if (e < 0 && e != -ENOENT && !rc) /* no list at all: nothing to move */
            rc = e;
        close(parent);
    }
    cgroupfs_pids_free(&p);
    return rc;
}

int cgroupfs_remove(js_cgroup_t *cg, js_cg_pids_t *leftover)
{
    if (leftover)
        leftover->n = 0;
    int rc = 0;
    js_cg_pids_t tmp = {0};
    for (size_t h = 0; cg && h < cg->m.n; h++) {
        if (!cg->created[h])
            continue;
        int e = 0;
        if (cg->dir[h] >= 0)
            rmdir_children(cg->dir[h], CG_WALK_DEPTH);
        for (int k = 0; k < CG_RMDIR_TRIES; k++) {
            e = unlinkat(cg->m.h[h].fd, cg->rel[h], AT_REMOVEDIR) < 0 ? -errno : 0;
            if (e == -ENOENT)
                e = 0;
            if (e != -EBUSY)
                break;
            if (dir_has_pids(cg, (int)h, &tmp))
                break; /* a live process: no point waiting */
            sleep_ns(CG_RMDIR_WAIT_NS);
        }
        if (e == 0) {
            cg_clear(cg, (int)h);
            continue;
        }
        if (e == -EBUSY && leftover) {
            tmp.n = 0;
            if (pids_read_dir(cg->dir[h], CG_WALK_DEPTH, &tmp) == 0)
                for (size_t i = 0; i < tmp.n; i++)
                    if (pids_push(leftover, tmp.pid[i]) < 0)
                        break;
        }
        if (!rc || (rc != -EBUSY && e == -EBUSY))
            rc = e;
    }
    cgroupfs_pids_free(&tmp);
    if (leftover)
        pids_sort_unique(leftover);
    return rc;
}
