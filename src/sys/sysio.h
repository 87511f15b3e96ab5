/* SPDX-License-Identifier: MIT
 *
 * The system-call layer for file I/O, with test-only fault injection. Every /proc, /sys and cgroup file read
 * (fsroot.c, sysattr.c), every open of a file or a directory (the path module: fsroot.h, fsfile.h), the
 * textfile sink's writes and, through SQLite's unix VFS, the recording's opens, reads and writes go through
 * it, so a test can make them fail the way a real machine does: short reads and writes, EINTR, EAGAIN, ESRCH
 * or ENOENT in the middle of a read (a process that vanished), EACCES, EMFILE, ENOSPC, EIO.
 *
 * Off (the normal case) each wrapper is one predictable branch on a global flag and the plain libc call. On,
 * the calls are counted per operation and every N-th fails as the spec says:
 *
 *   JOBSCOPE_FAULTS="OP:ERR:N[:COUNT[:AFTER]][,OP:ERR:N...]"
 *
 * OP is open, read (read and pread), write (write and pwrite) or close; ERR an errno name (EINTR, EAGAIN,
 * ESRCH, ENOENT, EACCES, EMFILE, ENOSPC, EIO, ...) or `short` (a read or write of half the bytes asked, at
 * least one); N > 0 makes calls N, 2N, 3N ... of that operation fail; COUNT (default or `-`: unlimited) stops
 * the rule after that many faults, so a test sees the fault clear; AFTER (default 0) lets that many calls
 * through first (calls AFTER+N, AFTER+2N ... fail), so the setup before the first sample succeeds. The
 * variable is read once, by the first fsroot_open; tests in the same process use sysio_faults_set instead.
 * Counts of calls and faults are kept per rule (sysio_faults_stats) and printed nowhere.
 */
#ifndef JOBSCOPE_SYSIO_H
#define JOBSCOPE_SYSIO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* sysio_armed: nonzero while fault rules are set (read by the wrappers; set only by sysio_faults_set). */
extern volatile int sysio_armed;

enum { SYSIO_OPEN, SYSIO_READ, SYSIO_WRITE, SYSIO_CLOSE, SYSIO_OP_MAX };

/* sysio_faults_set: replace the fault rules with `spec` (the JOBSCOPE_FAULTS syntax; NULL or "" clears them
 * and zeroes the counts). Not thread-safe against calls in flight: set it before the monitor starts. Returns
 * 0 or -EINVAL (malformed spec: the rules are then cleared). */
int sysio_faults_set(const char *spec);

/* sysio_faults_from_env: sysio_faults_set($JOBSCOPE_FAULTS) once per process (later calls do nothing).
 * Returns what sysio_faults_set returned, or 0. */
int sysio_faults_from_env(void);

/* sysio_faults_stats: for rule `i` (0-based, in spec order), its operation and the calls it saw and the
 * faults it injected. Returns false past the last rule. */
bool sysio_faults_stats(size_t i, int *ret_op, uint64_t *ret_calls, uint64_t *ret_injected);

/* sysio_faults_injected: faults injected so far by every rule. */
uint64_t sysio_faults_injected(void);

/* The faulting paths (used by the wrappers below when armed). */
int sysio_f_openat(int dirfd, const char *path, int flags, mode_t mode);
int sysio_f_open(const char *path, int flags, mode_t mode);
ssize_t sysio_f_read(int fd, void *buf, size_t n);
ssize_t sysio_f_pread(int fd, void *buf, size_t n, off_t off);
ssize_t sysio_f_write(int fd, const void *buf, size_t n);
ssize_t sysio_f_pwrite(int fd, const void *buf, size_t n, off_t off);
int sysio_f_close(int fd);

/* The wrappers: the libc call, or its faulting path while rules are set. Same contracts as libc's. */
int sys_openat(int dirfd, const char *path, int flags, mode_t mode);
static inline ssize_t sys_read(int fd, void *buf, size_t n)
{
    return __builtin_expect(sysio_armed, 0) ? sysio_f_read(fd, buf, n) : read(fd, buf, n);
}
static inline ssize_t sys_pread(int fd, void *buf, size_t n, off_t off)
{
    return __builtin_expect(sysio_armed, 0) ? sysio_f_pread(fd, buf, n, off) : pread(fd, buf, n, off);
}
static inline ssize_t sys_write(int fd, const void *buf, size_t n)
{
    return __builtin_expect(sysio_armed, 0) ? sysio_f_write(fd, buf, n) : write(fd, buf, n);
}
static inline int sys_close(int fd)
{
    return __builtin_expect(sysio_armed, 0) ? sysio_f_close(fd) : close(fd);
}

#endif
