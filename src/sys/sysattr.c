/* SPDX-License-Identifier: MIT
 *
 * sysfs attribute readers, directory listings and CPU lists (see sysattr.h).
 */
#include "sys/sysattr.h"

#include "sys/fsroot.h"
#include "sys/parse.h"
#include "sys/sysio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sysattr_open(int dirfd, const char *path)
{
    return fs_open(dirfd, path);
}

static size_t trim(char *buf, size_t n)
{
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        n--;
    buf[n] = '\0';
    return n;
}

ssize_t sysattr_pread(int fd, char *buf, size_t cap)
{
    ssize_t n;
    do
        n = sys_pread(fd, buf, cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        buf[0] = '\0';
        return -errno;
    }
    return (ssize_t)trim(buf, (size_t)n);
}

int sysattr_parse_i64(const char *s, int64_t *ret)
{
    const char *p = s;
    int64_t v;
    if (parse_i64(&p, &v) < 0)
        return -EINVAL;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (*p)
        return -EINVAL;
    *ret = v;
    return 0;
}

int sysattr_pread_i64(int fd, int64_t *ret)
{
    char buf[64];
    ssize_t n = sysattr_pread(fd, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    return sysattr_parse_i64(buf, ret);
}

ssize_t sysattr_read_str(int dirfd, const char *path, char *buf, size_t cap)
{
    int fd = sysattr_open(dirfd, path);
    if (fd < 0) {
        buf[0] = '\0';
        return fd;
    }
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t n = sys_read(fd, buf + len, cap - 1 - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int r = -errno;
            sys_close(fd);
            buf[0] = '\0';
            return r;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    sys_close(fd);
    return (ssize_t)trim(buf, len);
}

int sysattr_read_i64(int dirfd, const char *path, int64_t *ret)
{
    char buf[64];
    ssize_t n = sysattr_read_str(dirfd, path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    return sysattr_parse_i64(buf, ret);
}

static int name_cmp(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

void sysattr_list_free(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}

int sysattr_list(int dirfd, const char *path, const char *prefix, char ***ret_names)
{
    *ret_names = NULL;
    DIR *d;
    int rd = fs_opendir(dirfd, path, &d);
    if (rd < 0)
        return rd;
    size_t n = 0, cap = 8, plen = strlen(prefix);
    char **names = malloc(cap * sizeof(*names));
    int r = -ENOMEM;
    if (!names)
        goto out;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || strncmp(e->d_name, prefix, plen) != 0)
            continue;
        if (n + 1 == cap) {
            char **g = realloc(names, cap * 2 * sizeof(*names));
            if (!g)
                goto out;
            names = g;
            cap *= 2;
        }
        if (!(names[n] = strdup(e->d_name)))
            goto out;
        n++;
    }
    qsort(names, n, sizeof(*names), name_cmp);
    names[n] = NULL;
    *ret_names = names;
    names = NULL;
    r = (int)n;
out:
    if (names) {
        names[n] = NULL;
        sysattr_list_free(names);
    }
    closedir(d);
    return r;
}
