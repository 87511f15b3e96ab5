/* SPDX-License-Identifier: MIT
 *
 * Files a user names (recordings, exports, reports, summaries, marker files, credentials), as opposed to the
 * kernel files under the procfs and sysfs roots (fsroot.h). Every open of such a file in jobscope goes
 * through here or through fs_open(AT_FDCWD, path) for reading, so that none can block (a FIFO or a device
 * where a file was expected is refused, not waited on) and all of them pass through the fault-injection layer
 * (sysio.h). scripts/static.sh fails on a raw open(), openat(), opendir() or fopen() outside src/sys/.
 */
#ifndef JOBSCOPE_FSFILE_H
#define JOBSCOPE_FSFILE_H

#include <stdbool.h>
#include <sys/types.h>

/* fs_create: open output file `path` for writing. `flags` as for open(2) (O_WRONLY with O_CREAT, O_EXCL,
 * O_TRUNC, O_APPEND, O_NOFOLLOW as the caller needs); O_CLOEXEC and O_NOCTTY are added. The open itself never
 * blocks, and only a regular file is accepted (-EINVAL for a FIFO, a device or a directory that was there);
 * the descriptor returned is blocking again. Returns the descriptor or -errno. */
int fs_create(const char *path, int flags, mode_t mode);

/* fs_copy: copy regular file `from` into a new file `to` (O_EXCL | O_NOFOLLOW, permissions `mode`), with
 * `sync` flushed to storage before it returns. On failure the partial `to` is removed. Returns 0 or -errno
 * (-EEXIST when `to` exists). */
int fs_copy(const char *from, const char *to, mode_t mode, bool sync);

#endif
