/* SPDX-License-Identifier: MIT
 *
 * The recording's file I/O through the fault-injection layer (src/sys/sysio.h): SQLite does its own opens,
 * reads and writes in its unix VFS, which lets a program replace those system calls (xSetSystemCall). While
 * fault rules are set, sqlio_install points them at sysio's faulting paths, so a test can fail the
 * recording's writes with ENOSPC or EIO; otherwise it changes nothing and SQLite calls libc directly.
 */
#ifndef JOBSCOPE_SQLIO_H
#define JOBSCOPE_SQLIO_H

/* sqlio_install: while sysio's fault rules are armed, route SQLite's default VFS's open, read, pread64, write
 * and pwrite64 through them (once per process; later calls do nothing). Returns 0, or -ENOTSUP when the
 * default VFS does not allow it (then faults do not reach the recording). */
int sqlio_install(void);

#endif
