/* SPDX-License-Identifier: MIT
 *
 * SQLite's unix VFS system calls through sysio's faulting paths (sqlio.h). Test-only in effect: nothing is
 * replaced unless fault rules are armed.
 */
#include "sinks/sqlio.h"

#include "sys/sysio.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>

/* SQLite's unix VFS calls open(path, flags, mode) with an int mode, and the 64-bit offset variants */
static int vfs_open(const char *path, int flags, int mode)
{
    return sysio_f_open(path, flags, (mode_t)mode);
}

static ssize_t vfs_pread64(int fd, void *buf, size_t n, off_t off)
{
    return sysio_f_pread(fd, buf, n, off);
}

static ssize_t vfs_pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return sysio_f_pwrite(fd, buf, n, off);
}

int sqlio_install(void)
{
    static atomic_flag done = ATOMIC_FLAG_INIT;
    if (!sysio_armed || atomic_flag_test_and_set(&done))
        return 0;
    sqlite3_vfs *v = sqlite3_vfs_find(NULL);
    if (!v || v->iVersion < 3 || !v->xSetSystemCall)
        return -ENOTSUP;
    static const struct {
        const char *name;
        sqlite3_syscall_ptr fn;
    } calls[] = {
        {"open", (sqlite3_syscall_ptr)vfs_open},         {"read", (sqlite3_syscall_ptr)sysio_f_read},
        {"pread64", (sqlite3_syscall_ptr)vfs_pread64},   {"write", (sqlite3_syscall_ptr)sysio_f_write},
        {"pwrite64", (sqlite3_syscall_ptr)vfs_pwrite64}, {"pread", (sqlite3_syscall_ptr)sysio_f_pread},
        {"pwrite", (sqlite3_syscall_ptr)sysio_f_pwrite},
    };
    int r = 0;
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        bool required = i < 5; /* the plain pread/pwrite are not built into every SQLite */
        if (v->xSetSystemCall(v, calls[i].name, calls[i].fn) != SQLITE_OK && required)
            r = -ENOTSUP;
    }
    return r;
}
