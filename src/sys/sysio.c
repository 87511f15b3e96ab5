/* SPDX-License-Identifier: MIT
 *
 * The file I/O layer and its fault injection (sysio.h). The rules are a small fixed array; the counters are
 * atomics, so the textfile writer's thread and the embedded monitor's thread count with the monitor's.
 */
#include "sys/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define RULES_MAX 8

typedef struct {
    int op;
    int err; /* errno to fail with, or 0 for a short transfer */
    uint64_t every, limit, after;
    atomic_uint_fast64_t calls, injected;
} rule_t;

volatile int sysio_armed;
static rule_t rules[RULES_MAX];
static size_t nrules;

static const struct {
    const char *name;
    int e;
} errnames[] = {
    {"EINTR", EINTR}, {"EAGAIN", EAGAIN}, {"ESRCH", ESRCH},   {"ENOENT", ENOENT}, {"EACCES", EACCES},
    {"EPERM", EPERM}, {"EMFILE", EMFILE}, {"ENFILE", ENFILE}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT},
    {"EIO", EIO},     {"ENOMEM", ENOMEM}, {"EBADF", EBADF},   {"EFBIG", EFBIG},   {"EROFS", EROFS},
};

static int parse_rule(const char *s, size_t len, rule_t *r)
{
    char buf[96];
    if (len == 0 || len >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *save = NULL;
    char *op = strtok_r(buf, ":", &save), *err = strtok_r(NULL, ":", &save),
         *every = strtok_r(NULL, ":", &save), *limit = strtok_r(NULL, ":", &save),
         *after = strtok_r(NULL, ":", &save);
    if (!op || !err || !every || strtok_r(NULL, ":", &save))
        return -EINVAL;
    static const char *const ops[SYSIO_OP_MAX] = {"open", "read", "write", "close"};
    r->op = -1;
    for (int i = 0; i < SYSIO_OP_MAX; i++)
        if (!strcmp(op, ops[i]))
            r->op = i;
    if (r->op < 0)
        return -EINVAL;
    r->err = -1;
    if (!strcmp(err, "short") && (r->op == SYSIO_READ || r->op == SYSIO_WRITE))
        r->err = 0;
    for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
        if (!strcmp(err, errnames[i].name))
            r->err = errnames[i].e;
    if (r->err < 0)
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long e = strtoull(every, &end, 10);
    if (*end || errno || e == 0 || every[0] == '-')
        return -EINVAL;
    r->every = e;
    r->limit = r->after = 0;
    if (limit && strcmp(limit, "-") != 0) { /* "-": unlimited, when AFTER follows */
        unsigned long long l = strtoull(limit, &end, 10);
        if (*end || errno || l == 0 || limit[0] == '-')
            return -EINVAL;
        r->limit = l;
    }
    if (after) {
        unsigned long long a = strtoull(after, &end, 10);
        if (*end || errno || after[0] == '-')
            return -EINVAL;
        r->after = a;
    }
    atomic_store(&r->calls, 0);
    atomic_store(&r->injected, 0);
    return 0;
}

int sysio_faults_set(const char *spec)
{
    sysio_armed = 0;
    nrules = 0;
    if (!spec || !*spec)
        return 0;
    size_t n = 0;
    for (const char *p = spec;;) {
        size_t len = strcspn(p, ",");
        if (n == RULES_MAX || parse_rule(p, len, &rules[n]) < 0)
            return -EINVAL;
        n++;
        if (!p[len])
            break;
        p += len + 1;
    }
    nrules = n;
    sysio_armed = 1;
    return 0;
}

int sysio_faults_from_env(void)
{
    static atomic_flag done = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&done))
        return 0;
    const char *spec = getenv("JOBSCOPE_FAULTS");
    return spec && *spec ? sysio_faults_set(spec) : 0;
}

bool sysio_faults_stats(size_t i, int *ret_op, uint64_t *ret_calls, uint64_t *ret_injected)
{
    if (i >= nrules)
        return false;
    *ret_op = rules[i].op;
    *ret_calls = atomic_load(&rules[i].calls);
    *ret_injected = atomic_load(&rules[i].injected);
    return true;
}

uint64_t sysio_faults_injected(void)
{
    uint64_t n = 0;
    for (size_t i = 0; i < nrules; i++)
        n += atomic_load(&rules[i].injected);
    return n;
}

/* fault: the rule that fails this call of `op`, or NULL. Every rule of the op counts the call. */
static rule_t *fault(int op)
{
    rule_t *hit = NULL;
    for (size_t i = 0; i < nrules; i++) {
        rule_t *r = &rules[i];
        if (r->op != op)
            continue;
        uint64_t c = atomic_fetch_add(&r->calls, 1) + 1;
        if (hit || c <= r->after || (c - r->after) % r->every)
            continue;
        if (r->limit && atomic_fetch_add(&r->injected, 1) >= r->limit) {
            atomic_fetch_sub(&r->injected, 1);
            continue;
        }
        if (!r->limit)
            atomic_fetch_add(&r->injected, 1);
        hit = r;
    }
    return hit;
}

static size_t shorter(size_t n)
{
    return n > 1 ? n / 2 : n;
}

int sys_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    if (__builtin_expect(sysio_armed, 0))
        return sysio_f_openat(dirfd, path, flags, mode);
    return openat(dirfd, path, flags, mode);
}

int sysio_f_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    rule_t *r = fault(SYSIO_OPEN);
    if (r) {
        errno = r->err;
        return -1;
    }
    return openat(dirfd, path, flags, mode);
}

int sysio_f_open(const char *path, int flags, mode_t mode)
{
    return sysio_f_openat(AT_FDCWD, path, flags, mode);
}

ssize_t sysio_f_read(int fd, void *buf, size_t n)
{
    rule_t *r = fault(SYSIO_READ);
    if (r && r->err) {
        errno = r->err;
        return -1;
    }
    return read(fd, buf, r ? shorter(n) : n);
}

ssize_t sysio_f_pread(int fd, void *buf, size_t n, off_t off)
{
    rule_t *r = fault(SYSIO_READ);
    if (r && r->err) {
        errno = r->err;
        return -1;
    }
    return pread(fd, buf, r ? shorter(n) : n, off);
}

ssize_t sysio_f_write(int fd, const void *buf, size_t n)
{
    rule_t *r = fault(SYSIO_WRITE);
    if (r && r->err) {
        errno = r->err;
        return -1;
    }
    return write(fd, buf, r ? shorter(n) : n);
}

ssize_t sysio_f_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    rule_t *r = fault(SYSIO_WRITE);
    if (r && r->err) {
        errno = r->err;
        return -1;
    }
    return pwrite(fd, buf, r ? shorter(n) : n, off);
}

int sysio_f_close(int fd)
{
    rule_t *r = fault(SYSIO_CLOSE);
    int rc = close(fd); /* the descriptor is released either way, as Linux does on EINTR and EIO */
    if (r) {
        errno = r->err;
        return -1;
    }
    return rc;
}
