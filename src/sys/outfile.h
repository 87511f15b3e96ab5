/* SPDX-License-Identifier: MIT
 *
 * Output files published whole. Every file jobscope writes once and for good (an export, a report, a run's
 * summary files, a merged recording) is written under a temporary name in the directory of its final name
 * and renamed over it only once it is complete and on disk (fsync), so the final name never holds a truncated
 * file: a full disk, a write error, a crash or a kill leave the final name as it was (absent, or the old file
 * when replacing) and at most a temporary beside it, which a failure that is seen removes.
 *
 * The temporary, FINAL.tmp.HOST.PID.XXXXXXXX (this host's name, '.' and '/' replaced by '_'; 8 random hex
 * digits), is created with O_CREAT|O_EXCL|O_NOFOLLOW (a name someone else made, a symbolic link included, is
 * never opened: another name is drawn) and the mode the final file is to have: 0644 less the umask, or the
 * mode of the file it replaces. A library that opens files by name itself (HDF5, SQLite) gets a private
 * directory instead (FINAL.tmp.HOST.PID.XXXXXXXX/, mode 0700) and writes `tmp` inside it, where no one else
 * can put anything.
 *
 * A writer killed (kill -9, a crash) leaves its temporary; the next outfile_open of the same final name
 * removes those that are stale: named for this host, owned by this user, and whose PID is no process here
 * (also the legacy FINAL.merging.PID files of earlier merges, when untouched for a minute: their name does
 * not say which host writes them).
 */
#ifndef JOBSCOPE_OUTFILE_H
#define JOBSCOPE_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    char path[PATH_MAX]; /* the final name */
    char tmp[PATH_MAX];  /* the file being written */
    char dir[PATH_MAX];  /* the private directory holding tmp ("" for a plain temporary) */
    int fd;              /* open on tmp for writing (-1 with a private directory, or once closed) */
    bool replace;        /* publish over an existing file */
    int mode;            /* the replaced file's permission bits, or -1 */
} js_outfile_t;

/* outfile_clean_stale: remove the stale temporaries of final name `path` (see above). Returns how many were
 * removed (their bytes in *ret_bytes when not NULL), or -errno when the directory cannot be read. */
int outfile_clean_stale(const char *path, uint64_t *ret_bytes);

/* outfile_open: prepare `path` for writing (stale temporaries of it are removed first). With `replace` false
 * an existing `path` is refused; with it, an existing `path` must be a regular file (not a symbolic link).
 * With `private_dir` the temporary is a name in a new private directory for a library to create (o->fd is
 * -1), else it is created and open in o->fd. Returns 0; -EEXIST (exists, not replace), -ELOOP (a symbolic
 * link), -EISDIR or -EINVAL (not a regular file), -ENAMETOOLONG, or the -errno of creating the temporary
 * (-EACCES, -ENOSPC, ...). On failure nothing is left behind and *o is not open. */
int outfile_open(js_outfile_t *o, const char *path, bool replace, bool private_dir);

/* outfile_commit: publish: fsync and close o->fd (when open), give a replacing file the replaced one's mode,
 * rename the temporary to o->path (refusing, without replace, a `path` that appeared since), remove the
 * private directory. Returns 0 or -errno (a delayed write error such as -ENOSPC or -EIO from fsync or close,
 * -EEXIST, ...); on failure the temporary is removed (outfile_abort). Either way *o is closed. */
int outfile_commit(js_outfile_t *o);

/* outfile_abort: close and remove the temporary (and its private directory); `path` is untouched. Accepts a
 * zeroed, failed or already closed *o (then it does nothing). */
void outfile_abort(js_outfile_t *o);

#endif
