/* SPDX-License-Identifier: MIT
 *
 * The procfs and sysfs roots, and the file readers every source uses. All /proc and /sys access in jobscope
 * goes through a js_fsroot_t: a pair of directory descriptors opened once, so tests point a source at a
 * fixture tree (tests/fixtures/...) and production points it at the live kernel. This module is the only
 * place that names the default paths. Readers read to end-of-file (procfs files such as task/<tid>/children
 * hand back one page per read) and never allocate per call except to grow a caller-owned js_buf_t.
 */
#ifndef JOBSCOPE_FSROOT_H
#define JOBSCOPE_FSROOT_H

#include "core/buf.h"

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    int proc; /* directory fd of the procfs root */
    int sys;  /* directory fd of the sysfs root, or -1 */
} js_fsroot_t;

/* fsroot_open: open the roots. `procfs`/`sysfs` NULL means $JOBSCOPE_PROCFS / $JOBSCOPE_SYSFS, else the live
 * kernel's. Returns 0 or a negative errno (procfs missing); a missing sysfs is not an error (sys = -1). */
int fsroot_open(js_fsroot_t *ret, const char *procfs, const char *sysfs);

/* fsroot_close: close both descriptors; accepts a root that failed to open. */
void fsroot_close(js_fsroot_t *r);

/* fsroot_is_live: whether `r->proc` is the running kernel's procfs (then "self" names this process). */
int fsroot_is_live(const js_fsroot_t *r);

/* fsroot_pidns_check: whether the procfs root shows this process's PID namespace, so that the PIDs this
 * process knows (its own, its children's, a PID it was given) name the same processes in it. A PID namespace
 * made without a procfs of its own (`unshare -pf`, no --mount-proc) still sees the parent namespace's /proc:
 * there this process is not PID getpid(), and "the tree under PID 1" is the host's. Returns 0 when the
 * namespaces agree or the root is not a procfs (a fixture tree), -EXDEV when they differ; then *ret_pid_there
 * is this process's PID as that procfs numbers it (0: not visible in it at all). */
int fsroot_pidns_check(const js_fsroot_t *r, long *ret_pid_there);

/* fsroot_kernel_path: whether absolute path `path` names the live procfs or sysfs mount or a file under it
 * (as a descriptor's /proc/self/fd link reads). */
bool fsroot_kernel_path(const char *path);

/* fsroot_open_abs: open `abs_path`, an absolute kernel path read from the kernel itself (a mount point in
 * mountinfo), through the roots: a path under the procfs or sysfs default is opened relative to r->proc or
 * r->sys, so fixture trees work; any other absolute path only when `r` is the live procfs (else -ENOENT).
 * `flags` as for openat (O_CLOEXEC is added). Returns the descriptor or -errno. */
int fsroot_open_abs(const js_fsroot_t *r, const char *abs_path, int flags);

/* JS_READ_MAX: no kernel file jobscope reads comes near this size; a read that reaches it fails with -EFBIG
 * (a fixture tree whose `stat` is /dev/zero must not grow memory without bound). */
#define JS_READ_MAX (64u << 20)

/* fs_open: open `path` (relative to `dirfd`) for reading, never blocking (O_NONBLOCK: a FIFO in a fixture
 * tree does not hang the monitor) and only if it is a regular file, as every procfs, sysfs and cgroup file
 * is. Returns the descriptor (O_CLOEXEC) or -errno (-EINVAL: not a regular file). */
int fs_open(int dirfd, const char *path);

/* fs_read: read all of `path` (relative to `dirfd`) into `b`, growing it. Returns 0 or -errno (-ENOENT for a
 * vanished process, -EACCES, -ENOMEM). On failure b->len is 0 and b->p is "" if allocated. */
int fs_read(int dirfd, const char *path, js_buf_t *b);

/* fd_read: read all of an open file from offset 0 with pread (procfs regenerates the content), into `b`. */
int fd_read(int fd, js_buf_t *b);

/* fd_read_record: as fd_read for files the kernel renders whole in one read (stat, statm, io, status:
 * single-record seq_files): one pread when the content fits the buffer, the full loop otherwise. Saves the
 * second, empty read that confirms end-of-file. Not for files served a page at a time (task/<tid>/children).
 */
int fd_read_record(int fd, js_buf_t *b);

/* fd_read_paged: as fd_read for seq_files served one page per read (task/<tid>/children): a first read that
 * returns clearly less than a page (page minus 64 bytes, more than any one record) held everything. */
int fd_read_paged(int fd, js_buf_t *b);

/* fs_read_record: open `path`, fd_read_record, close. */
int fs_read_record(int dirfd, const char *path, js_buf_t *b);

/* fs_read_small: read `path` into a fixed buffer `buf` of `cap` bytes (at most cap-1 bytes, NUL-terminated);
 * returns the length read or -errno. Content beyond cap-1 bytes is cut off. */
ssize_t fs_read_small(int dirfd, const char *path, char *buf, size_t cap);

/* fs_open_dir: open directory `path` (relative to `dirfd`; AT_FDCWD for a path the user named) through
 * sysio, close-on-exec and never blocking: O_DIRECTORY refuses a FIFO, a device or a file (-ENOTDIR) without
 * waiting on it. `path_only` gives an O_PATH descriptor (for fstat and as a base for *at calls only).
 * Returns the descriptor or -errno. */
int fs_open_dir(int dirfd, const char *path, bool path_only);

/* fs_opendir: fs_open_dir, then a directory stream on it. Returns 0 and *ret (the caller closedir()s it), or
 * -errno (*ret NULL). Every directory listing outside src/sys/ goes through here or js_pid_iter_t. */
int fs_opendir(int dirfd, const char *path, DIR **ret);

/* A listing of the numeric entries of a directory: the processes of a procfs root ("."), or the threads of
 * one process ("PID/task"). The one place the PID listings of /proc are read. */
typedef struct {
    DIR *d;
} js_pid_iter_t;

/* pid_iter_open: start listing directory `path` under `dirfd` (fs_opendir). Returns 0 or -errno (-ENOENT: no
 * such directory, a process that is gone); on failure the iterator is closed (pid_iter_close accepts it). */
int pid_iter_open(js_pid_iter_t *it, int dirfd, const char *path);

/* pid_iter_next: the next entry whose whole name is a decimal number from 1 to INT32_MAX without leading
 * zeros ("self", "thread-self", "net", "01" are skipped), or 0 at the end of the listing. */
int32_t pid_iter_next(js_pid_iter_t *it);

/* pid_iter_fd: the descriptor of the directory being listed (a base for reading the entries' files), or -1.
 */
int pid_iter_fd(const js_pid_iter_t *it);

/* pid_iter_close: end the listing; accepts a closed or failed iterator. */
void pid_iter_close(js_pid_iter_t *it);

#endif
