/* SPDX-License-Identifier: MIT
 *
 * sysfs attribute files: one value per file (energy_uj, scaling_cur_freq, temp1_input, port_xmit_data), read
 * through the directory descriptors of js_fsroot_t. The node sources open the files they read every sample
 * once, at init, and re-read them with one pread from offset 0 per sample (sysfs regenerates the text on each
 * read from offset 0); files read once (names, ranges, topology) go through the open-read-close helpers. Also
 * here: directory listings in natural order (hwmon2 before hwmon10), and CPU lists ("0-3,8,10-11"). Nothing
 * here allocates except sysattr_list().
 */
#ifndef JOBSCOPE_SYSATTR_H
#define JOBSCOPE_SYSATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* sysattr_open: fs_open(dirfd, path): read-only, close-on-exec, never blocking, regular files only (sysfs
 * attributes are). Returns the descriptor or -errno. */
int sysattr_open(int dirfd, const char *path);

/* sysattr_pread: one pread of at most cap-1 bytes from offset 0 of `fd` into `buf`, NUL-terminated, trailing
 * newlines removed. Returns the length kept or -errno (EINTR retried). An attribute longer than cap-1 bytes
 * is cut there. */
ssize_t sysattr_pread(int fd, char *buf, size_t cap);

/* sysattr_parse_i64: the decimal integer that is the whole of `s` (leading blanks and an optional '-'
 * allowed, trailing blanks ignored). Returns 0, or -EINVAL when `s` holds anything else ("N/A (no PMA)", "",
 * "3.5"). */
int sysattr_parse_i64(const char *s, int64_t *ret);

/* sysattr_pread_i64: sysattr_pread + sysattr_parse_i64. Returns 0, -errno of the read, or -EINVAL. `*ret`
 * untouched on failure. */
int sysattr_pread_i64(int fd, int64_t *ret);

/* sysattr_read_str: open `path` under `dirfd`, read at most cap-1 bytes, close; trailing newlines removed.
 * Returns the length or -errno. */
ssize_t sysattr_read_str(int dirfd, const char *path, char *buf, size_t cap);

/* sysattr_read_i64: sysattr_read_str + sysattr_parse_i64. Returns 0 or -errno / -EINVAL. */
int sysattr_read_i64(int dirfd, const char *path, int64_t *ret);

/* sysattr_list: the names of the entries of directory `path` under `dirfd` that start with `prefix` ("" for
 * all; "." and ".." never), sorted in natural order (strverscmp). On success *ret_names is a NULL-terminated
 * array the caller frees with sysattr_list_free(), and the count is returned; -errno on failure (-ENOENT: no
 * such directory), with *ret_names NULL. */
int sysattr_list(int dirfd, const char *path, const char *prefix, char ***ret_names);

/* sysattr_list_free: free a list from sysattr_list(); accepts NULL. */
void sysattr_list_free(char **names);

#endif
