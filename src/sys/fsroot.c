/* SPDX-License-Identifier: MIT
 *
 * procfs/sysfs roots and read-to-EOF helpers. The only file that spells the default kernel paths.
 */
#include "sys/fsroot.h"

#include "sys/sysio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define PROCFS_DEFAULT "/proc"
#define SYSFS_DEFAULT "/sys"

int fsroot_open(js_fsroot_t *ret, const char *procfs, const char *sysfs)
{
    sysio_faults_from_env(); /* test-only fault injection ($JOBSCOPE_FAULTS, sysio.h); nothing when unset */
    if (!procfs)
        procfs = getenv("JOBSCOPE_PROCFS");
    if (!procfs || !*procfs)
        procfs = PROCFS_DEFAULT;
    if (!sysfs)
        sysfs = getenv("JOBSCOPE_SYSFS");
    if (!sysfs || !*sysfs)
        sysfs = SYSFS_DEFAULT;
    int p = open(procfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (p < 0) {
        ret->proc = ret->sys = -1;
        return -errno;
    }
    ret->proc = p;
    ret->sys = open(sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return 0;
}

void fsroot_close(js_fsroot_t *r)
{
    if (r->proc >= 0)
        close(r->proc);
    if (r->sys >= 0)
        close(r->sys);
    r->proc = r->sys = -1;
}

int fsroot_is_live(const js_fsroot_t *r)
{
    struct stat a, b;
    if (fstat(r->proc, &a) < 0 || stat(PROCFS_DEFAULT, &b) < 0)
        return 0;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int fsroot_pidns_check(const js_fsroot_t *r, long *ret_pid_there)
{
    struct statfs sf;
    if (fstatfs(r->proc, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
        return 0;
    char link[32];
    ssize_t n = readlinkat(r->proc, "self", link, sizeof(link) - 1);
    long there = 0;
    if (n > 0) {
        link[n] = '\0';
        char *end;
        there = strtol(link, &end, 10);
        if (*end)
            there = 0;
    }
    if (there == (long)getpid())
        return 0;
    *ret_pid_there = there;
    return -EXDEV;
}

/* under: if `path` is `dir` or below it, the rest relative to it ("." for `dir` itself), else NULL. */
static const char *under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (strncmp(path, dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
        return NULL;
    path += n;
    while (*path == '/')
        path++;
    return *path ? path : ".";
}

int fsroot_open_abs(const js_fsroot_t *r, const char *abs_path, int flags)
{
    if (abs_path[0] != '/')
        return -EINVAL;
    const char *rest;
    int fd;
    if ((rest = under(abs_path, SYSFS_DEFAULT)))
        fd = r->sys >= 0 ? sys_openat(r->sys, rest, flags | O_CLOEXEC, 0) : (errno = ENOENT, -1);
    else if ((rest = under(abs_path, PROCFS_DEFAULT)))
        fd = sys_openat(r->proc, rest, flags | O_CLOEXEC, 0);
    else if (fsroot_is_live(r))
        fd = sys_openat(AT_FDCWD, abs_path, flags | O_CLOEXEC, 0);
    else
        return -ENOENT;
    return fd < 0 ? -errno : fd;
}

int fs_open(int dirfd, const char *path)
{
    int fd = sys_openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        sys_close(fd);
        return -EINVAL;
    }
    return fd;
}

int fd_read(int fd, js_buf_t *b)
{
    b->len = 0;
    if (buf_reserve(b, 1024) < 0)
        return -ENOMEM;
    for (;;) {
        if (b->len >= JS_READ_MAX) {
            b->len = 0;
            b->p[0] = '\0';
            return -EFBIG;
        }
        if (b->cap - b->len < 512 && buf_reserve(b, b->cap * 2) < 0)
            return -ENOMEM;
        ssize_t n = sys_pread(fd, b->p + b->len, b->cap - b->len - 1, (off_t)b->len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int r = -errno;
            b->len = 0;
            b->p[0] = '\0';
            return r;
        }
        if (n == 0)
            break;
        b->len += (size_t)n;
    }
    b->p[b->len] = '\0';
    return 0;
}

/* read_first: one pread from offset 0; when it returned fewer than `complete_below` bytes it held the whole
 * file, else read on to end-of-file. `complete_below` 0 means "the buffer was not filled". */
static int read_first(int fd, js_buf_t *b, size_t reserve, size_t complete_below)
{
    b->len = 0;
    if (buf_reserve(b, reserve) < 0)
        return -ENOMEM;
    ssize_t n;
    do
        n = sys_pread(fd, b->p, b->cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        b->p[0] = '\0';
        return -errno;
    }
    if ((size_t)n < (complete_below ? complete_below : b->cap - 1)) {
        b->len = (size_t)n;
        b->p[n] = '\0';
        return 0;
    }
    return fd_read(fd, b); /* there may be more */
}

int fd_read_record(int fd, js_buf_t *b)
{
    return read_first(fd, b, 4096, 0);
}

int fd_read_paged(int fd, js_buf_t *b)
{
    return read_first(fd, b, 8192, 4096 - 64);
}

/* open_read: open `path`, read it with `reader`, close. */
static int open_read(int dirfd, const char *path, js_buf_t *b, int (*reader)(int, js_buf_t *))
{
    int fd = fs_open(dirfd, path);
    if (fd < 0) {
        int r = fd;
        b->len = 0;
        if (b->p)
            b->p[0] = '\0';
        return r;
    }
    int r = reader(fd, b);
    sys_close(fd);
    return r;
}

int fs_read_record(int dirfd, const char *path, js_buf_t *b)
{
    return open_read(dirfd, path, b, fd_read_record);
}

int fs_read(int dirfd, const char *path, js_buf_t *b)
{
    return open_read(dirfd, path, b, fd_read);
}

ssize_t fs_read_small(int dirfd, const char *path, char *buf, size_t cap)
{
    int fd = fs_open(dirfd, path);
    if (fd < 0)
        return fd;
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t n = sys_read(fd, buf + len, cap - 1 - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int r = -errno;
            sys_close(fd);
            return r;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    sys_close(fd);
    return (ssize_t)len;
}

int fs_open_dir(int dirfd, const char *path, bool path_only)
{
    int flags = O_DIRECTORY | O_CLOEXEC | (path_only ? O_PATH : O_RDONLY | O_NONBLOCK | O_NOCTTY);
    int fd = sys_openat(dirfd, path, flags, 0);
    return fd < 0 ? -errno : fd;
}

int fs_opendir(int dirfd, const char *path, DIR **ret)
{
    *ret = NULL;
    int fd = fs_open_dir(dirfd, path, false);
    if (fd < 0)
        return fd;
    DIR *d = fdopendir(fd);
    if (!d) {
        int r = -errno;
        sys_close(fd);
        return r;
    }
    *ret = d;
    return 0;
}

int pid_iter_open(js_pid_iter_t *it, int dirfd, const char *path)
{
    return fs_opendir(dirfd, path, &it->d);
}

int32_t pid_iter_next(js_pid_iter_t *it)
{
    if (!it->d)
        return 0;
    struct dirent *de;
    while ((de = readdir(it->d))) {
        const char *p = de->d_name;
        if (*p < '1' || *p > '9')
            continue;
        int64_t v = 0;
        while (*p >= '0' && *p <= '9' && v <= INT32_MAX)
            v = v * 10 + (*p++ - '0');
        if (!*p && v <= INT32_MAX)
            return (int32_t)v;
    }
    return 0;
}

int pid_iter_fd(const js_pid_iter_t *it)
{
    return it->d ? dirfd(it->d) : -1;
}

void pid_iter_close(js_pid_iter_t *it)
{
    if (it->d)
        closedir(it->d);
    it->d = NULL;
}

bool fsroot_kernel_path(const char *path)
{
    static const char *const roots[] = {PROCFS_DEFAULT, SYSFS_DEFAULT};
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        size_t n = strlen(roots[i]);
        if (!strncmp(path, roots[i], n) && (path[n] == '\0' || path[n] == '/'))
            return true;
    }
    return false;
}
