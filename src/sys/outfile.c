/* SPDX-License-Identifier: MIT
 *
 * Output files published whole (see outfile.h): a temporary beside the final name, renamed over it once
 * complete and synced.
 */
#include "sys/outfile.h"

#include "sys/sysio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint32_t random_u32(void)
{
    static uint32_t counter;
    uint32_t r;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)ts.tv_nsec * 2654435761u ^ (uint32_t)getpid() ^ ++counter * 40503u;
}

/* this_host: the host name as it goes into a temporary's name ('.' and '/' are kept out of it: the name is
 * parsed from the right, and the host is one component). */
static void this_host(char *buf, size_t cap)
{
    if (gethostname(buf, cap) < 0 || !buf[0])
        snprintf(buf, cap, "host");
    buf[cap - 1] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '/' || *p == '.' || (unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
            *p = '_';
}

/* stale_pid: the PID of a temporary of `base` named by `name` (BASE.tmp.HOST.PID.XXXXXXXX from this host, or
 * the legacy BASE.merging.PID of earlier merges), or 0 when `name` is none of these. */
static long stale_pid(const char *name, const char *base, const char *host, bool *ret_legacy)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) != 0)
        return 0;
    const char *rest = name + bl;
    char *end;
    *ret_legacy = false;
    if (!strncmp(rest, ".merging.", 9)) {
        long pid = strtol(rest + 9, &end, 10);
        *ret_legacy = true;
        return rest[9] >= '0' && rest[9] <= '9' && !*end && pid > 0 ? pid : 0;
    }
    size_t hl = strlen(host);
    if (strncmp(rest, ".tmp.", 5) != 0 || strncmp(rest + 5, host, hl) != 0 || rest[5 + hl] != '.')
        return 0;
    const char *p = rest + 5 + hl + 1;
    long pid = strtol(p, &end, 10);
    if (*p < '0' || *p > '9' || pid <= 0 || *end != '.' || strlen(end + 1) != 8)
        return 0;
    for (const char *h = end + 1; *h; h++)
        if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
            return 0;
    return pid;
}

int outfile_clean_stale(const char *path, uint64_t *ret_bytes)
{
    if (ret_bytes)
        *ret_bytes = 0;
    char dir[PATH_MAX], host[256];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".") >=
        (int)sizeof(dir))
        return -ENAMETOOLONG;
    this_host(host, sizeof(host));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return -e;
    }
    int n = 0;
    uid_t me = geteuid();
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        bool legacy;
        long pid = stale_pid(e->d_name, base, host, &legacy);
        struct stat st;
        if (!pid || pid == (long)getpid() || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            st.st_uid != me || !(S_ISREG(st.st_mode) || (S_ISDIR(st.st_mode) && !legacy)))
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its writer lives (or is another user's process) */
        /* a legacy name does not say which host wrote it: one still being written elsewhere is recent */
        if (legacy && now - st.st_mtime < 60)
            continue;
        uint64_t bytes = 0;
        if (S_ISDIR(st.st_mode)) { /* a private directory: its one file, then itself */
            int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
            struct dirent *f;
            while (sd && (f = readdir(sd))) {
                struct stat fs;
                if (f->d_name[0] == '.' && (!f->d_name[1] || (f->d_name[1] == '.' && !f->d_name[2])))
                    continue;
                if (fstatat(sub, f->d_name, &fs, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(fs.st_mode) &&
                    unlinkat(sub, f->d_name, 0) == 0 && S_ISREG(fs.st_mode))
                    bytes += (uint64_t)fs.st_size;
            }
            if (sd)
                closedir(sd);
            else if (sub >= 0)
                close(sub);
            if (unlinkat(dfd, e->d_name, AT_REMOVEDIR) < 0)
                continue;
        } else {
            if (unlinkat(dfd, e->d_name, 0) < 0)
                continue;
            bytes = (uint64_t)st.st_size;
        }
        n++;
        if (ret_bytes)
            *ret_bytes += bytes;
    }
    closedir(d);
    return n;
}

int outfile_open(js_outfile_t *o, const char *path, bool replace, bool private_dir)
{
    memset(o, 0, sizeof(*o));
    o->fd = -1;
    o->mode = -1;
    o->replace = replace;
    if (!path || !*path)
        return -EINVAL;
    if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path))
        return -ENAMETOOLONG;
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!replace)
            return -EEXIST;
        if (S_ISLNK(st.st_mode))
            return -ELOOP;
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        if (!S_ISREG(st.st_mode))
            return -EINVAL;
        o->mode = (int)(st.st_mode & 07777);
    } else if (errno != ENOENT) {
        return -errno;
    }
    outfile_clean_stale(path, NULL); /* what a killed writer of this name left, if any */
    char host[256];
    this_host(host, sizeof(host));
    for (int attempt = 0; attempt < 64; attempt++) {
        char *name = private_dir ? o->dir : o->tmp;
        if (snprintf(name, PATH_MAX, "%s.tmp.%s.%d.%08x", path, host, (int)getpid(),
                     (unsigned)random_u32()) >= PATH_MAX)
            return -ENAMETOOLONG;
        if (private_dir) {
            if (mkdir(o->dir, 0700) < 0) {
                int e = errno;
                o->dir[0] = '\0';
                if (e == EEXIST)
                    continue;
                return -e;
            }
            const char *base = strrchr(path, '/');
            if (snprintf(o->tmp, sizeof(o->tmp), "%s/%s", o->dir, base ? base + 1 : path) >=
                (int)sizeof(o->tmp)) {
                rmdir(o->dir);
                o->dir[0] = o->tmp[0] = '\0';
                return -ENAMETOOLONG;
            }
            return 0;
        }
        int fd = sys_openat(AT_FDCWD, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            int e = errno;
            o->tmp[0] = '\0';
            if (e == EEXIST)
                continue; /* someone's file or link at that name: draw another */
            return -e;
        }
        o->fd = fd;
        return 0;
    }
    return -EEXIST;
}

void outfile_abort(js_outfile_t *o)
{
    if (!o || !o->tmp[0])
        return;
    if (o->fd >= 0)
        sys_close(o->fd);
    o->fd = -1;
    unlink(o->tmp);
    if (o->dir[0])
        rmdir(o->dir);
    o->tmp[0] = o->dir[0] = '\0';
}

int outfile_commit(js_outfile_t *o)
{
    if (!o || !o->tmp[0])
        return -EBADF;
    int r = 0;
    if (o->fd >= 0) {
        if (fsync(o->fd) < 0 && errno != EINVAL) /* EINVAL: a file that cannot be synced (none here) */
            r = -errno;
        if (o->mode >= 0 && r == 0 && fchmod(o->fd, (mode_t)o->mode) < 0)
            r = -errno;
        if (sys_close(o->fd) < 0 && r == 0)
            r = -errno;
        o->fd = -1;
    } else {
        int fd = open(o->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            r = -errno;
        else {
            if (fsync(fd) < 0 && errno != EINVAL)
                r = -errno;
            if (o->mode >= 0 && r == 0 && fchmod(fd, (mode_t)o->mode) < 0)
                r = -errno;
            close(fd);
        }
    }
    if (r == 0) {
        if (o->replace) {
            if (rename(o->tmp, o->path) < 0)
                r = -errno;
        } else if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) < 0) {
            r = -errno;
            if (r == -EINVAL ||
                r == -ENOSYS) { /* a file system without it: link refuses an existing name too */
                r = link(o->tmp, o->path) < 0 ? -errno : 0;
                if (r == 0)
                    unlink(o->tmp);
            }
        }
    }
    if (r < 0) {
        outfile_abort(o);
        return r;
    }
    if (o->dir[0])
        rmdir(o->dir);
    o->tmp[0] = o->dir[0] = '\0';
    return 0;
}
